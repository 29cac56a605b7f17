/* Freestanding stand-in, see TargetConditionals.h. */
#include <stddef.h>
void abort(void);
