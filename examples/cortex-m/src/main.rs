//! Firmware for a Cortex-M4F (QEMU's `mps2-an386` board) that runs a computation on an input
//! embedded in flash, writes its output into a statically allocated buffer, and reports the
//! output, the peak stack use and the cycle count over ARM semihosting.
//!
//! The computation is a stand-in for a network planned by `memplan!`: a 3-tap convolution with
//! zero padding, a bias and a ReLU over the 16 `f32`s of `input.bin`. Everything around it —
//! the input read in place from flash, the output in `.bss`, no heap, the measurements and the
//! output protocol — is what the network version keeps.
//!
//! # Output protocol
//!
//! Text lines on semihosting stdout, each `<key> <value>`, in this order:
//!
//! ```text
//! output <hex>          the output's bytes (f32s, little-endian) as lowercase hex, two digits a byte
//! systick_ticks <n>     SysTick ticks (processor clock) taken by the computation alone
//! stack_compute <bytes> the most stack used from reset to the end of the computation
//! stack_peak <bytes>    the most stack used by the whole run, reporting included: the figure
//!                       that goes into the RAM total
//! ```
//!
//! QEMU's SysTick runs at the board's 25 MHz from virtual time, so `systick_ticks` means
//! something only under `-icount shift=S` (each instruction `2^S` ns): the computation then took
//! about `systick_ticks * 40 / 2^S` instructions, deterministically. Without `-icount` it follows
//! the host's clock. (QEMU does not model the DWT: `CYCCNT` reads 0.)
//!
//! then the program exits through semihosting `SYS_EXIT` with `EXIT_SUCCESS` (QEMU exits 0).
//! A panic prints `panic <message>` on stderr and exits with `EXIT_FAILURE` (QEMU exits 1).
//! A reader ignores keys it does not know, so lines can be added.
//!
//! # Stack measurement
//!
//! The first thing `main` does is paint the whole free stack region, from cortex-m-rt's
//! `_stack_end` (just above `.bss`) up to the current stack pointer, with [`PAINT`]. Later, the
//! lowest word that no longer holds the pattern marks the deepest the stack has been;
//! `_stack_start - that address` is the peak so far (it counts the reset handler's and `main`'s
//! frames too). Interrupt handlers that ran in between are counted as well, as they must be.

#![no_std]
#![no_main]

use core::cell::UnsafeCell;
use core::fmt::Write as _;
use core::panic::PanicInfo;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
// The crate provides the critical section and the `__cpsid`-style intrinsics the link needs.
use cortex_m as _;
use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::{debug, hio};

/// The word painted over the free stack before the computation runs.
const PAINT: u32 = 0xDEAD_BEEF;

/// Number of `f32`s in the input and the output.
const N: usize = 16;

/// Bytes of `input.bin`.
const INPUT_LEN: usize = include_bytes!("../input.bin").len();

/// Bytes aligned to 4, so a network version can view them as `f32`s in place.
#[repr(C, align(4))]
struct Aligned<T>(T);

/// The input, in flash (`.rodata`): `N` little-endian `f32`s.
static INPUT: Aligned<[u8; INPUT_LEN]> = Aligned(*include_bytes!("../input.bin"));

/// The stand-in's weights: a 3-tap kernel and a bias.
const KERNEL: [f32; 3] = [0.25, 0.5, 0.25];
/// Added to every convolution output before the ReLU.
const BIAS: f32 = -0.125;

/// A `static` value handed out as `&'static mut` at most once: the safe way to own a buffer
/// that lives in `.bss` (zeroed by the reset handler, never copied from flash, never on the
/// stack).
struct TakeOnce<T> {
    /// Set by the first [`TakeOnce::take`].
    taken: AtomicBool,
    /// The value, reachable only through the one `&mut` that `take` returns.
    value: UnsafeCell<T>,
}

// SAFETY: the only access to `value` is the single `&mut` handed out by `take`, guarded by the
// atomic `taken` flag, so sharing a `TakeOnce` between contexts never gives two references to
// `value`; `T: Send` because that `&mut` may be used from whichever context took it.
unsafe impl<T: Send> Sync for TakeOnce<T> {}

impl<T> TakeOnce<T> {
    /// A value not taken yet.
    const fn new(value: T) -> Self {
        Self {
            taken: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// The value the first time, `None` after.
    // A `&mut` from `&self` is this type's purpose: `taken` makes it the only one ever made.
    #[allow(clippy::mut_from_ref)]
    fn take(&'static self) -> Option<&'static mut T> {
        if self.taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        // SAFETY: `taken` was false and is now true, atomically: this is the only call that gets
        // here, so this is the only reference to `value` ever created.
        Some(unsafe { &mut *self.value.get() })
    }
}

/// The output buffer, all zeros, so it goes in `.bss`.
static OUTPUT: TakeOnce<[f32; N]> = TakeOnce::new([0.0; N]);

/// SysTick wraps seen since it was started (each one is `SYST_RELOAD + 1` ticks).
static SYSTICK_WRAPS: AtomicU32 = AtomicU32::new(0);
/// SysTick's reload value: its counter is 24 bits wide.
const SYST_RELOAD: u32 = 0x00FF_FFFF;

unsafe extern "C" {
    /// The bottom of the stack region (cortex-m-rt's `link.x`: the end of `.bss`, 4-aligned).
    static _stack_end: u32;
    /// The top of the stack region, the initial stack pointer (cortex-m-rt's `link.x`).
    static _stack_start: u32;
}

/// The stand-in computation: `output[i] = relu(k0*x[i-1] + k1*x[i] + k2*x[i+1] + bias)`, with
/// `x[-1] = x[N] = 0`. Same operations in the same order as the host test's reference, so the
/// results are equal bit for bit.
fn compute(input: &[u8], output: &mut [f32; N]) {
    let x = |i: usize| -> f32 {
        match input.get(4 * i..4 * i + 4) {
            Some(&[a, b, c, d]) => f32::from_le_bytes([a, b, c, d]),
            _ => 0.0,
        }
    };
    for (i, out) in output.iter_mut().enumerate() {
        let left = if i == 0 { 0.0 } else { x(i - 1) };
        let sum = KERNEL[0] * left + KERNEL[1] * x(i) + KERNEL[2] * x(i + 1) + BIAS;
        *out = if sum > 0.0 { sum } else { 0.0 };
    }
}

/// Paints `[bottom, sp)` with [`PAINT`], `sp` being the stack pointer of this function: only
/// words below every live stack frame are written.
fn paint_stack(bottom: usize) {
    // SAFETY: the loop writes only the words from `bottom` (the 4-aligned end of `.bss`) up to
    // the current stack pointer, exclusive: memory that belongs to no Rust object (it is the
    // unused part of the stack, below every live frame) and that nothing reads before it is
    // written again. It uses only the registers named here, never the stack, and the stack
    // pointer is 4-aligned, so the words tile the region exactly.
    unsafe {
        core::arch::asm!(
            "2:",
            "cmp {p}, sp",
            "bhs 3f",
            "str {pattern}, [{p}], #4",
            "b 2b",
            "3:",
            p = inout(reg) bottom => _,
            pattern = in(reg) PAINT,
            options(nostack),
        );
    }
}

/// The lowest address in `[bottom, top)` whose word is no longer [`PAINT`] (`top` if every word
/// still is): the deepest the stack has been since [`paint_stack`].
fn stack_low_water(bottom: usize, top: usize) -> usize {
    let mut p = bottom;
    while p < top {
        // SAFETY: `p` is 4-aligned and in `[bottom, top)`, the stack region, which is RAM that
        // is always mapped and initialised (painted or written by the stack). A volatile read
        // of it creates no reference and so aliases no Rust object.
        if unsafe { core::ptr::read_volatile(p as *const u32) } != PAINT {
            break;
        }
        p += 4;
    }
    p
}

/// SysTick's total ticks since `start_systick`, counting wraps.
fn systick_now() -> u64 {
    loop {
        let wraps = SYSTICK_WRAPS.load(Ordering::Acquire);
        let current = SYST::get_current();
        // A wrap between the two reads would pair the old count with the new value: read again.
        if SYSTICK_WRAPS.load(Ordering::Acquire) == wraps {
            return u64::from(wraps) * (u64::from(SYST_RELOAD) + 1)
                + u64::from(SYST_RELOAD - current);
        }
    }
}

/// Starts SysTick free-running on the processor clock, its wrap exception counting wraps.
fn start_systick(syst: &mut SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(SYST_RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
    // The counter reads 0 until its first tick loads the reload value; a start read in that
    // window would be off by a whole period.
    while SYST::get_current() == 0 {}
}

/// Counts SysTick wraps for [`systick_now`].
#[exception]
fn SysTick() {
    SYSTICK_WRAPS.fetch_add(1, Ordering::AcqRel);
}

/// Writes `bytes` as lowercase hex, a small buffer at a time (each write is one semihosting
/// call).
fn write_hex(out: &mut hio::HostStream, bytes: impl IntoIterator<Item = u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut line = [0u8; 64];
    let mut len = 0;
    for byte in bytes {
        line[len] = DIGITS[usize::from(byte >> 4)];
        line[len + 1] = DIGITS[usize::from(byte & 0xF)];
        len += 2;
        if len == line.len() {
            out.write_all(&line).ok();
            len = 0;
        }
    }
    out.write_all(&line[..len]).ok();
}

/// Ends the program through semihosting with `status`; spins if no debugger or emulator is
/// there to end it.
fn exit(status: debug::ExitStatus) -> ! {
    debug::exit(status);
    loop {
        cortex_m::asm::wfi();
    }
}

#[entry]
fn main() -> ! {
    // Only the symbols' addresses are taken; they are never read through.
    let (bottom, top) = (
        &raw const _stack_end as usize,
        &raw const _stack_start as usize,
    );
    paint_stack(bottom);

    let mut peripherals = cortex_m::Peripherals::take().expect("peripherals taken once");
    start_systick(&mut peripherals.SYST);

    let output = OUTPUT.take().expect("output taken once");
    let start = systick_now();
    compute(core::hint::black_box(&INPUT.0[..]), output);
    let ticks = systick_now() - start;

    let compute_peak = top - stack_low_water(bottom, top);

    let mut out = hio::hstdout().expect("semihosting stdout");
    out.write_all(b"output ").ok();
    write_hex(
        &mut out,
        output.iter().flat_map(|value| value.to_le_bytes()),
    );
    writeln!(out).ok();
    writeln!(out, "systick_ticks {ticks}").ok();
    writeln!(out, "stack_compute {compute_peak}").ok();
    // Measured after the reporting above, which formats the same way as this last line.
    let peak = top - stack_low_water(bottom, top);
    writeln!(out, "stack_peak {peak}").ok();
    exit(debug::EXIT_SUCCESS)
}

/// Reports the panic on semihosting stderr and exits with failure.
#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    cortex_m::interrupt::disable();
    if let Ok(mut err) = hio::hstderr() {
        writeln!(err, "panic {info}").ok();
    }
    exit(debug::EXIT_FAILURE)
}
