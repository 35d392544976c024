#include "semihost.h"

static inline int sh_call(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void sh_puts(const char* s) { sh_call(0x04, s); }

void sh_put_u64(uint64_t v) {
  char buf[24];
  int i = 23;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v);
  sh_puts(&buf[i]);
}

void sh_put_hex(const uint8_t* p, uint32_t n) {
  static const char digits[] = "0123456789abcdef";
  char line[65];
  uint32_t len = 0;
  for (uint32_t i = 0; i < n; i++) {
    line[len++] = digits[p[i] >> 4];
    line[len++] = digits[p[i] & 15];
    if (len == 64) {
      line[len] = 0;
      sh_puts(line);
      len = 0;
    }
  }
  line[len] = 0;
  if (len) sh_puts(line);
}

void sh_exit(int success) {
  // ADP_Stopped_ApplicationExit (QEMU exits 0) or ADP_Stopped_RunTimeErrorUnknown (exits 1).
  sh_call(0x18, (const void*)(success ? 0x20026 : 0x20023));
  for (;;) __asm__ volatile("wfi");
}
