/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Windows test
 * binaries under Wine versions that lack it (Debian 12's Wine 8.0). Rust's
 * standard library imports ProcessPrng from this DLL for its random numbers
 * (HashMap keys); without the DLL a binary does not load (status c0000135).
 *
 * ProcessPrng fills the buffer with RtlGenRandom, exported by advapi32 as
 * SystemFunction036. Used only by the cross-platform test suite
 * (tests/suites/40-cross.sh); never shipped in the package.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll
 *        bcryptprimitives.c -ladvapi32
 */
#include <windows.h>

/* RtlGenRandom; its import name is SystemFunction036. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a 32-bit length: fill large buffers in pieces. */
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
