/* Stand-in for the macOS SDK header, for the cross-platform suite only
 * (tests/suites/40-cross.sh): `cargo clippy --target *-apple-darwin` runs
 * the build scripts of C crates (ring, for TLS), whose object files are
 * never linked here. */
#define TARGET_OS_MAC 1
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
