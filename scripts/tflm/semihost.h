// ARM semihosting (bkpt 0xAB) for the harness: text out, exit.
#pragma once
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
void sh_puts(const char* s);            // SYS_WRITE0
void sh_put_u64(uint64_t v);            // decimal
void sh_put_hex(const uint8_t* p, uint32_t n);
void sh_exit(int success) __attribute__((noreturn));  // SYS_EXIT
#ifdef __cplusplus
}
#endif
