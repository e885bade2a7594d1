// libjpeg-turbo's system-dependent memory back end (the jmemsys.h interface), replacing its jmemnobs.c: every block
// libjpeg allocates (its pools, coefficient arrays, row buffers) is charged to the per-call budget of budget.h. A
// refused allocation returns NULL, which libjpeg's memory manager turns into JERR_OUT_OF_MEMORY (error_exit); the
// decoder/encoder then reports ERR_MEDIA_TOO_LARGE because the budget's `exceeded` flag is set. No backing store
// (temporary files) exists: the budget, not a disk, bounds a large image.
extern "C" {
#define JPEG_INTERNALS
#include <jinclude.h>
#include <jpeglib.h>
#include <jmemsys.h>
}

#include "budget.h"

extern "C" {

GLOBAL(void*) jpeg_get_small(j_common_ptr, size_t sizeofobject) { return panto_budget_malloc(sizeofobject); }

GLOBAL(void) jpeg_free_small(j_common_ptr, void* object, size_t) { panto_budget_free(object); }

GLOBAL(void*) jpeg_get_large(j_common_ptr, size_t sizeofobject) { return panto_budget_malloc(sizeofobject); }

GLOBAL(void) jpeg_free_large(j_common_ptr, void* object, size_t) { panto_budget_free(object); }

/** Everything requested is "available": the budget refuses what does not fit, and there is no backing store. */
GLOBAL(size_t) jpeg_mem_available(j_common_ptr, size_t, size_t max_bytes_needed, size_t) { return max_bytes_needed; }

GLOBAL(void) jpeg_open_backing_store(j_common_ptr cinfo, backing_store_ptr, long) {
  ERREXIT(cinfo, JERR_NO_BACKING_STORE);
}

GLOBAL(long) jpeg_mem_init(j_common_ptr) { return 0; }

GLOBAL(void) jpeg_mem_term(j_common_ptr) {}

}  // extern "C"
