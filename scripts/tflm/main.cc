// One inference of a .tflite model with TensorFlow Lite Micro on QEMU's mps2-an386
// (Cortex-M4F), measured the way memplan's examples/cortex-m firmware measures its own:
// SysTick (processor clock, 25 MHz in QEMU's virtual time) read before and after
// MicroInterpreter::Invoke() only; under `-icount shift=6` the instructions are
// ticks * 40 / 64. Peak stack by painting (startup.c paints the free stack at reset).
//
// Output over semihosting, `<key> <value>` lines:
//   model <name>, ops <names>, arena_size <bytes compiled in>, arena_used <arena_used_bytes()>,
//   output <hex>, output_equal yes|no, systick_ticks <n>, stack_compute <bytes>,
//   stack_peak <bytes>.
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/cortex_m_generic/debug_log_callback.h"
#include "tensorflow/lite/schema/schema_generated.h"

#include "model_ops.h"
#include "semihost.h"

#ifndef ARENA_SIZE
#define ARENA_SIZE (3u * 1024u * 1024u)
#endif
#ifndef MODEL_NAME
#define MODEL_NAME "model"
#endif

extern "C" {
extern const uint8_t g_model[], g_input[], g_expected[];
extern const uint32_t g_model_len, g_input_len, g_expected_len;
extern volatile uint32_t g_systick_wraps;
extern uint32_t _stack_end, _stack_start;
}

namespace {

alignas(16) uint8_t g_arena[ARENA_SIZE];

constexpr uint32_t kPaint = 0xDEADBEEFu;
constexpr uint32_t kSystReload = 0x00FFFFFFu;
volatile uint32_t* const kSystCsr = reinterpret_cast<volatile uint32_t*>(0xE000E010);
volatile uint32_t* const kSystRvr = reinterpret_cast<volatile uint32_t*>(0xE000E014);
volatile uint32_t* const kSystCvr = reinterpret_cast<volatile uint32_t*>(0xE000E018);

// As memplan's start_systick: processor clock, reload 2^24-1, wrap interrupt, wait for the
// first load.
void StartSysTick() {
  *kSystCsr = 0;
  *kSystRvr = kSystReload;
  *kSystCvr = 0;
  *kSystCsr = (1u << 2) | (1u << 1) | 1u;  // CLKSOURCE=core, TICKINT, ENABLE
  while (*kSystCvr == 0) {
  }
}

// As memplan's systick_now: total ticks, wraps included, read consistently.
uint64_t SysTickNow() {
  for (;;) {
    uint32_t wraps = g_systick_wraps;
    uint32_t current = *kSystCvr;
    if (g_systick_wraps == wraps) {
      return static_cast<uint64_t>(wraps) * (kSystReload + 1ull) + (kSystReload - current);
    }
  }
}

uintptr_t StackLowWater() {
  uintptr_t p = reinterpret_cast<uintptr_t>(&_stack_end);
  uintptr_t top = reinterpret_cast<uintptr_t>(&_stack_start);
  while (p < top && *reinterpret_cast<volatile uint32_t*>(p) == kPaint) p += 4;
  return p;
}

void Line(const char* key, uint64_t v) {
  sh_puts(key);
  sh_puts(" ");
  sh_put_u64(v);
  sh_puts("\n");
}

void Fail(const char* what) {
  sh_puts("error ");
  sh_puts(what);
  sh_puts("\n");
  sh_exit(0);
}

void LogCallback(const char* s) {
  sh_puts("log ");
  sh_puts(s);
  sh_puts("\n");
}

bool OutputEqual(const TfLiteTensor* out) {
  if (out->bytes != g_expected_len) return false;
  const uint8_t* got = tflite::GetTensorData<uint8_t>(out);
  if (out->type != kTfLiteFloat32) return memcmp(got, g_expected, g_expected_len) == 0;
  for (uint32_t i = 0; i < g_expected_len / 4; i++) {
    float a, b;
    memcpy(&a, got + 4 * i, 4);
    memcpy(&b, g_expected + 4 * i, 4);
    if (!(fabsf(a - b) <= 1e-4f + 1e-3f * fabsf(b))) return false;
  }
  return true;
}

}  // namespace

int main() {
  RegisterDebugLogCallback(LogCallback);
  StartSysTick();

  const tflite::Model* model = tflite::GetModel(g_model);
  if (model->version() != TFLITE_SCHEMA_VERSION) Fail("schema version");

  tflite::MicroMutableOpResolver<HARNESS_NUM_OPS> resolver;
  bool ok;
  HARNESS_REGISTER_OPS(resolver, ok);
  if (!ok) Fail("op registration");

  tflite::MicroInterpreter interpreter(model, resolver, g_arena, ARENA_SIZE);
  if (interpreter.AllocateTensors() != kTfLiteOk) Fail("AllocateTensors");
  if (interpreter.inputs_size() != 1 || interpreter.outputs_size() != 1) Fail("not 1 input, 1 output");

  TfLiteTensor* input = interpreter.input(0);
  if (input->bytes != g_input_len) Fail("input size");
  memcpy(tflite::GetTensorData<uint8_t>(input), g_input, g_input_len);

  // The measured region: Invoke() alone, as memplan's firmware measures its net::run().
  const uint64_t start = SysTickNow();
  const TfLiteStatus status = interpreter.Invoke();
  const uint64_t ticks = SysTickNow() - start;
  const uintptr_t top = reinterpret_cast<uintptr_t>(&_stack_start);
  const uintptr_t compute_peak = top - StackLowWater();
  if (status != kTfLiteOk) Fail("Invoke");

  const TfLiteTensor* output = interpreter.output(0);
  sh_puts("model " MODEL_NAME "\n");
  sh_puts("ops " HARNESS_OP_NAMES "\n");
  Line("arena_size", ARENA_SIZE);
  Line("arena_used", interpreter.arena_used_bytes());
  sh_puts("output ");
  sh_put_hex(tflite::GetTensorData<uint8_t>(output), output->bytes);
  sh_puts("\n");
  sh_puts(OutputEqual(output) ? "output_equal yes\n" : "output_equal no\n");
  Line("systick_ticks", ticks);
  Line("stack_compute", compute_peak);
  // After the reporting, as memplan's stack_peak.
  const uintptr_t peak = top - StackLowWater();
  Line("stack_peak", peak);
  sh_exit(1);
}
