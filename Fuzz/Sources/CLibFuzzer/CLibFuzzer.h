// libFuzzer's entry for programs with their own main (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library).
// SwiftPM gives every executable a main of its own, so the fuzz targets call this instead of relying on
// libFuzzer's main.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
