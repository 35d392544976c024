// Reset and vector table for QEMU's mps2-an386 (Cortex-M4F). Reset: enable the FPU (CPACR),
// copy .data, zero .bss, paint the free stack (as memplan's firmware does), run the C++
// constructors, call main. SysTick counts its wraps for the instruction measurement.
#include <stdint.h>
#include "semihost.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _stack_end, _stack_start;
extern void (*__preinit_array_start[])(void), (*__preinit_array_end[])(void);
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);
int main(void);

volatile uint32_t g_systick_wraps;

void SysTick_Handler(void) { g_systick_wraps++; }

static void fault(const char* what) {
  sh_puts("error ");
  sh_puts(what);
  sh_puts("\n");
  sh_exit(0);
}
void Default_Handler(void) { fault("unexpected exception"); }
void HardFault_Handler(void) { fault("HardFault"); }

// Paints [bottom, sp) with the pattern, using registers only (no stack), like memplan's
// paint_stack: only words below every live frame are written.
static inline __attribute__((always_inline)) void paint_stack(uint32_t* bottom) {
  uint32_t sp;
  __asm__ volatile(
      "   mov %[sp], sp\n"
      "1: cmp %[p], %[sp]\n"
      "   bhs 2f\n"
      "   str %[pat], [%[p]], #4\n"
      "   b 1b\n"
      "2:\n"
      : [p] "+r"(bottom), [sp] "=&r"(sp)
      : [pat] "r"(0xDEADBEEFu)
      : "cc", "memory");
}

__attribute__((noreturn, used)) void Reset_Handler(void) {
  // CPACR: full access to CP10 and CP11 (the FPU), before any floating-point instruction.
  *(volatile uint32_t*)0xE000ED88 |= (0xFu << 20);
  __asm__ volatile("dsb\n isb" ::: "memory");
  for (uint32_t *s = &_sidata, *d = &_sdata; d < &_edata;) *d++ = *s++;
  for (uint32_t* d = &_sbss; d < &_ebss;) *d++ = 0;
  paint_stack(&_stack_end);
  for (void (**f)(void) = __preinit_array_start; f < __preinit_array_end; f++) (*f)();
  for (void (**f)(void) = __init_array_start; f < __init_array_end; f++) (*f)();
  main();
  sh_exit(0);
}

typedef void (*vector_t)(void);
#define WEAK_DEFAULT __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) WEAK_DEFAULT;
void MemManage_Handler(void) WEAK_DEFAULT;
void BusFault_Handler(void) WEAK_DEFAULT;
void UsageFault_Handler(void) WEAK_DEFAULT;
void SVC_Handler(void) WEAK_DEFAULT;
void DebugMon_Handler(void) WEAK_DEFAULT;
void PendSV_Handler(void) WEAK_DEFAULT;

// 16 + 240 entries: the size of cortex-m-rt's default table (1024 bytes), which memplan's
// firmware links, so the two flash figures differ by the runtime only. QEMU's AN386 has 32 IRQs.
__attribute__((section(".vector_table"), used)) const vector_t g_vectors[16 + 240] = {
    (vector_t)&_stack_start, Reset_Handler, NMI_Handler, HardFault_Handler,
    MemManage_Handler, BusFault_Handler, UsageFault_Handler, 0, 0, 0, 0,
    SVC_Handler, DebugMon_Handler, 0, PendSV_Handler, SysTick_Handler,
    // External interrupts: none enabled; every one Default_Handler.
    [16 ... 255] = Default_Handler};
