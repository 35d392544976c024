//! The packed 16-bit instructions of the Armv7E-M DSP extension that the int8 kernels use,
//! behind one trait with two implementations: [`Native`], the instructions themselves
//! (Cortex-M4 and M7, `cfg(memplan_dsp)`, set by the build script), and [`Emulated`], the same
//! arithmetic in portable Rust, so the packed kernels run and are tested on every target.
//!
//! A *pair* is a `u32` holding two int16 lanes (lane 0 in bits 0..16). Widening int8 to int16
//! takes one instruction for two bytes: `SXTB16` sign-extends bytes 0 and 2 of a word into the
//! lanes of a pair, and its rotated form bytes 1 and 3; `SXTAB16` adds a pair while it does so.
//! `SMLAD` then multiplies the two lanes of two pairs and adds both products to an int32
//! accumulator: two multiply-accumulates in one single-cycle instruction, which is where CMSIS-NN
//! gets its speed on these cores. Sums wrap modulo 2^32 in every implementation (`SMLAD` sets
//! the sticky Q flag on overflow and wraps), exactly as the reference kernels' `wrapping_add`
//! does, so the order in which products are summed never changes a bit.
//!
//! ```text
//!  word  [ b3 | b2 | b1 | b0 ]      sxtb16(word)        = [ b2 as i16 | b0 as i16 ]
//!                                   sxtb16_ror8(word)   = [ b3 as i16 | b1 as i16 ]
//!  smlad([a1|a0], [c1|c0], acc)     = acc + a0 * c0 + a1 * c1
//! ```

use super::window::{Taps, each_quad};

/// The DSP instructions the packed kernels are written with.
#[cfg_attr(not(any(memplan_dsp, test)), allow(dead_code))] // used on DSP targets and in tests
pub(crate) trait Dsp {
    /// Bytes 0 and 2 of `x`, sign-extended into the two lanes of a pair.
    fn sxtb16(x: u32) -> u32;
    /// Bytes 1 and 3 of `x`, sign-extended into the two lanes of a pair.
    fn sxtb16_ror8(x: u32) -> u32;
    /// `a + sxtb16(x)`, lane by lane (each lane wraps at 16 bits).
    fn sxtab16(a: u32, x: u32) -> u32;
    /// `a + sxtb16_ror8(x)`, lane by lane.
    fn sxtab16_ror8(a: u32, x: u32) -> u32;
    /// `acc + a.lane0 * b.lane0 + a.lane1 * b.lane1`, wrapping.
    fn smlad(a: u32, b: u32, acc: i32) -> i32;
    /// `acc + a.lane0 * b.lane0`, wrapping.
    fn smlabb(a: u32, b: u32, acc: i32) -> i32;
    /// `acc + a.lane1 * b.lane1`, wrapping.
    fn smlatt(a: u32, b: u32, acc: i32) -> i32;

    /// `acc[j] + sum over the taps of (x[input + j] + offset) * w[filter + j]` for four channels
    /// `j` (`offsets` the input offset in both lanes of a pair): one quad of channels of a
    /// depthwise window. `None` when the taps do not fit `x` and `w`.
    #[inline(always)]
    fn window_quad(
        acc: [i32; 4],
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offsets: u32,
    ) -> Option<[i32; 4]> {
        if !taps.fit(x, w) {
            return None;
        }
        let [mut a0, mut a1, mut a2, mut a3] = acc;
        let word = |s: &[i8], at: u32| {
            let at = at as usize;
            u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]].map(i8::cast_unsigned))
        };
        for &[i, f] in taps.list() {
            let (xw, ww) = (word(x, i), word(w, f));
            let (xo, xe) = (Self::sxtab16_ror8(offsets, xw), Self::sxtab16(offsets, xw));
            let (wo, we) = (Self::sxtb16_ror8(ww), Self::sxtb16(ww));
            a0 = Self::smlabb(xe, we, a0);
            a2 = Self::smlatt(xe, we, a2);
            a1 = Self::smlabb(xo, wo, a1);
            a3 = Self::smlatt(xo, wo, a3);
        }
        Some([a0, a1, a2, a3])
    }

    /// [`Dsp::window_quad`] of every whole quad of channels of `sums` (at most `bias`'s), each
    /// starting from its `bias`, into `sums`; `false` (and `sums` as it was) when the taps of
    /// those channels do not fit `x` and `w`.
    #[inline(always)]
    fn window_sums(
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offsets: u32,
        bias: &[i32],
        sums: &mut [i32],
    ) -> bool {
        each_quad(x, w, taps, bias, sums, |acc, x, w| {
            Self::window_quad(acc, x, w, taps, offsets)
        })
    }

    /// `s + [a . r0, a . r1, a . r2, a . r3]` over the whole words of `a` (its first
    /// `len / 4 * 4` values): the four rows `rows[k d..k d + len]`, `d` apart, by one input row
    /// (FULLY_CONNECTED, four units at a time). `s` unchanged when `rows` is shorter than
    /// `3 d + len` or `d < len`.
    #[inline(always)]
    fn rows_1x4(mut s: [i32; 4], a: &[i8], rows: &[i8], d: usize) -> [i32; 4] {
        let words = a.len() / 4;
        if d < words * 4 || rows.len() < 3 * d + words * 4 {
            return s;
        }
        for (i, a) in a.as_chunks::<4>().0.iter().enumerate() {
            let a = u32::from_le_bytes(a.map(i8::cast_unsigned));
            let (ae, ao) = (Self::sxtb16(a), Self::sxtb16_ror8(a));
            for (k, s) in s.iter_mut().enumerate() {
                let at = k * d + 4 * i;
                let w = u32::from_le_bytes(
                    [rows[at], rows[at + 1], rows[at + 2], rows[at + 3]].map(i8::cast_unsigned),
                );
                *s = Self::smlad(
                    ao,
                    Self::sxtb16_ror8(w),
                    Self::smlad(ae, Self::sxtb16(w), *s),
                );
            }
        }
        s
    }

    /// `s + [a . f, a . g, b . f, b . g]` over whole quads: `quads[i]` holds columns `a` and `b`
    /// as four pairs `[a_even, a_odd, b_even, b_odd]`, `f[i]` and `g[i]` four weights each of
    /// two filter rows; as many quads as the shortest of the three. The inner loop of the
    /// int8 convolution.
    #[inline(always)]
    fn quads_2x2(mut s: [i32; 4], quads: &[[u32; 4]], f: &[[i8; 4]], g: &[[i8; 4]]) -> [i32; 4] {
        for ((&[ae, ao, be, bo], &f), &g) in quads.iter().zip(f).zip(g) {
            let f = u32::from_le_bytes(f.map(i8::cast_unsigned));
            let (fe, fo) = (Self::sxtb16(f), Self::sxtb16_ror8(f));
            s[0] = Self::smlad(ao, fo, Self::smlad(ae, fe, s[0]));
            s[2] = Self::smlad(bo, fo, Self::smlad(be, fe, s[2]));
            let g = u32::from_le_bytes(g.map(i8::cast_unsigned));
            let (ge, go) = (Self::sxtb16(g), Self::sxtb16_ror8(g));
            s[1] = Self::smlad(ao, go, Self::smlad(ae, ge, s[1]));
            s[3] = Self::smlad(bo, go, Self::smlad(be, ge, s[3]));
        }
        s
    }

    /// `acc[j] += (x[j] + offset) * w[j]` for the whole quads of `j` the three slices share:
    /// one tap of a depthwise window over a block of channels (`offset` an int16 whose sum with
    /// an int8 stays one). The inner loop of the int8 depthwise convolution.
    #[inline(always)]
    fn channels(acc: &mut [i32], x: &[i8], w: &[i8], offset: i32) {
        let offsets = pair(offset, offset);
        let (xq, wq) = (x.as_chunks::<4>().0, w.as_chunks::<4>().0);
        for ((a, &x), &w) in acc.as_chunks_mut::<4>().0.iter_mut().zip(xq).zip(wq) {
            let (x, w) = (
                u32::from_le_bytes(x.map(i8::cast_unsigned)),
                u32::from_le_bytes(w.map(i8::cast_unsigned)),
            );
            let (xe, xo) = (Self::sxtab16(offsets, x), Self::sxtab16_ror8(offsets, x));
            let (we, wo) = (Self::sxtb16(w), Self::sxtb16_ror8(w));
            a[0] = Self::smlabb(xe, we, a[0]);
            a[2] = Self::smlatt(xe, we, a[2]);
            a[1] = Self::smlabb(xo, wo, a[1]);
            a[3] = Self::smlatt(xo, wo, a[3]);
        }
    }
}

/// Lane `i` (0 or 1) of a pair, as the int16 it holds.
#[cfg(test)]
#[inline(always)]
// taking 16 bits is the point
fn lane(pair: u32, i: u32) -> i32 {
    i32::from((pair >> (16 * i)) as u16 as i16)
}

/// Two int16 values as a pair.
#[cfg_attr(not(any(memplan_dsp, test)), allow(dead_code))]
#[inline(always)]
// the bits of the int16 lanes
pub(crate) fn pair(lo: i32, hi: i32) -> u32 {
    (lo as u32 & 0xFFFF) | ((hi as u32) << 16)
}

/// The instructions computed in portable Rust, bit for bit: what the tests run the packed
/// kernels with on any host (the reference for [`Native`]).
#[cfg(test)]
pub(crate) struct Emulated;

#[cfg(test)]
impl Dsp for Emulated {
    #[inline(always)]
    // taking one byte is the point
    fn sxtb16(x: u32) -> u32 {
        pair(i32::from(x as u8 as i8), i32::from((x >> 16) as u8 as i8))
    }

    #[inline(always)]
    fn sxtb16_ror8(x: u32) -> u32 {
        Self::sxtb16(x.rotate_right(8))
    }

    #[inline(always)]
    fn sxtab16(a: u32, x: u32) -> u32 {
        let b = Self::sxtb16(x);
        pair(
            lane(a, 0).wrapping_add(lane(b, 0)),
            lane(a, 1).wrapping_add(lane(b, 1)),
        )
    }

    #[inline(always)]
    fn sxtab16_ror8(a: u32, x: u32) -> u32 {
        Self::sxtab16(a, x.rotate_right(8))
    }

    #[inline(always)]
    fn smlad(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(lane(a, 0) * lane(b, 0))
            .wrapping_add(lane(a, 1) * lane(b, 1))
    }

    #[inline(always)]
    fn smlabb(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(lane(a, 0) * lane(b, 0))
    }

    #[inline(always)]
    fn smlatt(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(lane(a, 1) * lane(b, 1))
    }
}

/// The instructions themselves, through `asm!` (the Arm DSP intrinsics are unstable in Rust).
#[cfg(memplan_dsp)]
pub(crate) struct Native;

// SAFETY (every `asm!` below): each block is one DSP data-processing instruction that reads
// only its input registers and writes only its output register: no memory (`nomem`), no stack
// (`nostack`), no side effect beyond the result (`pure`). Those that cannot overflow leave the
// flags alone (`preserves_flags`); `SMLAD`, `SMLABB` and `SMLATT` may set the sticky Q flag,
// which nothing reads, so they do not claim to preserve the flags. The build script sets
// `memplan_dsp` only for `thumbv7em` targets, whose cores all have these instructions. The
// kernels' tests run the same code with [`Emulated`]; the Cortex-M firmware test
// (`tests/test_cortex_m.rs`) runs these on QEMU and compares whole networks with LiteRT.
#[cfg(memplan_dsp)]
#[allow(unsafe_code)]
impl Dsp for Native {
    #[inline(always)]
    fn sxtb16(x: u32) -> u32 {
        let r: u32;
        unsafe {
            core::arch::asm!("sxtb16 {r}, {x}", r = lateout(reg) r, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    #[inline(always)]
    fn sxtb16_ror8(x: u32) -> u32 {
        let r: u32;
        unsafe {
            core::arch::asm!("sxtb16 {r}, {x}, ror #8", r = lateout(reg) r, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    #[inline(always)]
    fn sxtab16(a: u32, x: u32) -> u32 {
        let r: u32;
        unsafe {
            core::arch::asm!("sxtab16 {r}, {a}, {x}", r = lateout(reg) r, a = in(reg) a,
                x = in(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    #[inline(always)]
    fn sxtab16_ror8(a: u32, x: u32) -> u32 {
        let r: u32;
        unsafe {
            core::arch::asm!("sxtab16 {r}, {a}, {x}, ror #8", r = lateout(reg) r, a = in(reg) a,
                x = in(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    #[inline(always)]
    fn smlad(a: u32, b: u32, acc: i32) -> i32 {
        let r: i32;
        unsafe {
            core::arch::asm!("smlad {r}, {a}, {b}, {acc}", r = lateout(reg) r, a = in(reg) a,
                b = in(reg) b, acc = in(reg) acc, options(pure, nomem, nostack));
        }
        r
    }

    #[inline(always)]
    fn smlabb(a: u32, b: u32, acc: i32) -> i32 {
        let r: i32;
        unsafe {
            core::arch::asm!("smlabb {r}, {a}, {b}, {acc}", r = lateout(reg) r, a = in(reg) a,
                b = in(reg) b, acc = in(reg) acc, options(pure, nomem, nostack));
        }
        r
    }

    #[inline(always)]
    fn smlatt(a: u32, b: u32, acc: i32) -> i32 {
        let r: i32;
        unsafe {
            core::arch::asm!("smlatt {r}, {a}, {b}, {acc}", r = lateout(reg) r, a = in(reg) a,
                b = in(reg) b, acc = in(reg) acc, options(pure, nomem, nostack));
        }
        r
    }

    /// The loop of the default method, scheduled by hand in twelve registers (LLVM's own
    /// allocation of it spills the accumulators to the stack every iteration): per quad, two
    /// weight words widened, the columns' pairs loaded two at a time, eight `SMLAD`s (16
    /// multiply-accumulates in 19 instructions).
    #[inline(always)]
    fn quads_2x2(s: [i32; 4], quads: &[[u32; 4]], f: &[[i8; 4]], g: &[[i8; 4]]) -> [i32; 4] {
        let n = quads.len().min(f.len()).min(g.len());
        if n == 0 {
            return s;
        }
        let [mut s0, mut s1, mut s2, mut s3] = s;
        // SAFETY: the loop runs `n >= 1` times and reads, per iteration, 16 bytes at `q` (one
        // quad, 8-aligned as `[u32; 4]` is at least 4-aligned and `ldrd` needs 4 on this core),
        // 4 bytes at `f` and 4 at `g` (unaligned `ldr` is allowed on the Armv7-M cores that
        // have the DSP extension), each pointer advanced past what it read: `n` quads and `n`
        // words of each filter row, all within the slices (`n` is the shortest length). It
        // writes only its registers (the pointers and counter are scratch copies, `_` after),
        // uses no stack, and sets the flags (`subs`), which the compiler does not assume kept.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {t0}, [{f}], #4",
                "sxtb16 {t1}, {t0}",
                "sxtb16 {t0}, {t0}, ror #8",
                "ldrd {t2}, {t3}, [{q}]",
                "smlad {s0}, {t2}, {t1}, {s0}",
                "smlad {s0}, {t3}, {t0}, {s0}",
                "ldrd {t2}, {t3}, [{q}, #8]",
                "smlad {s2}, {t2}, {t1}, {s2}",
                "smlad {s2}, {t3}, {t0}, {s2}",
                "ldr {t0}, [{g}], #4",
                "sxtb16 {t1}, {t0}",
                "sxtb16 {t0}, {t0}, ror #8",
                "smlad {s3}, {t2}, {t1}, {s3}",
                "smlad {s3}, {t3}, {t0}, {s3}",
                "ldrd {t2}, {t3}, [{q}], #16",
                "smlad {s1}, {t2}, {t1}, {s1}",
                "smlad {s1}, {t3}, {t0}, {s1}",
                "subs {n}, #1",
                "bne 2b",
                q = inout(reg) quads.as_ptr() => _,
                f = inout(reg) f.as_ptr() => _,
                g = inout(reg) g.as_ptr() => _,
                n = inout(reg) n => _,
                s0 = inout(reg) s0,
                s1 = inout(reg) s1,
                s2 = inout(reg) s2,
                s3 = inout(reg) s3,
                t0 = out(reg) _,
                t1 = out(reg) _,
                t2 = out(reg) _,
                t3 = out(reg) _,
                options(readonly, nostack),
            );
        }
        [s0, s1, s2, s3]
    }

    /// The loop of the default method in thirteen registers: per word of the input row, the word
    /// widened in halves, then each row's word loaded (two rows through each of two pointers,
    /// `d` apart), widened and multiplied in by two `SMLAD` (16 multiply-accumulates in 25
    /// instructions).
    #[inline(always)]
    #[allow(unsafe_code)]
    fn rows_1x4(s: [i32; 4], a: &[i8], rows: &[i8], d: usize) -> [i32; 4] {
        let words = a.len() / 4;
        if words == 0 || d < words * 4 || rows.len() < 3 * d + words * 4 {
            return s;
        }
        let [mut s0, mut s1, mut s2, mut s3] = s;
        // SAFETY: the loop runs `words >= 1` times; iteration `i` reads 4 bytes of `a` at `4 i`
        // and 4 bytes of `rows` at `k d + 4 i` for `k` in 0..4, all within the slices
        // (`4 words <= a.len()`, `3 d + 4 words <= rows.len()`; unaligned `ldr` is allowed on
        // these cores); `p2 = rows + 2 d` is within `rows` as `2 d < rows.len()`. Only
        // registers are written (pointers and counter are scratch copies, `_` after); no stack;
        // `subs` sets the flags, which the compiler does not assume kept.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {xe}, [{ap}], #4",
                "sxtb16 {xo}, {xe}, ror #8",
                "sxtb16 {xe}, {xe}",
                "ldr {w}, [{p0}, {d}]",
                "sxtb16 {t}, {w}",
                "smlad {s1}, {xe}, {t}, {s1}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {s1}, {xo}, {w}, {s1}",
                "ldr {w}, [{p0}], #4",
                "sxtb16 {t}, {w}",
                "smlad {s0}, {xe}, {t}, {s0}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {s0}, {xo}, {w}, {s0}",
                "ldr {w}, [{p2}, {d}]",
                "sxtb16 {t}, {w}",
                "smlad {s3}, {xe}, {t}, {s3}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {s3}, {xo}, {w}, {s3}",
                "ldr {w}, [{p2}], #4",
                "sxtb16 {t}, {w}",
                "smlad {s2}, {xe}, {t}, {s2}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {s2}, {xo}, {w}, {s2}",
                "subs {n}, #1",
                "bne 2b",
                ap = inout(reg) a.as_ptr() => _,
                p0 = inout(reg) rows.as_ptr() => _,
                p2 = inout(reg) rows.as_ptr().add(2 * d) => _,
                d = in(reg) d,
                n = inout(reg) words => _,
                s0 = inout(reg) s0,
                s1 = inout(reg) s1,
                s2 = inout(reg) s2,
                s3 = inout(reg) s3,
                xe = out(reg) _,
                xo = out(reg) _,
                w = out(reg) _,
                t = out(reg) _,
                options(readonly, nostack),
            );
        }
        [s0, s1, s2, s3]
    }

    /// The loop of the default method in thirteen registers, over every quad and every tap, the
    /// four sums in registers: per quad, its four biases loaded, the taps walked, the sums
    /// stored (the loop's pointers kept in a small state in memory); per tap, its two offsets
    /// loaded in one `LDRD`, the input and weight words loaded at them, both widened in halves
    /// (`SXTAB16` adding the offset, `SXTB16`), four `SMLAxy` (4 multiply-accumulates in 13
    /// instructions, the loop's test being the end mark after the last tap).
    #[inline(always)]
    #[allow(unsafe_code)]
    fn window_sums(
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offsets: u32,
        bias: &[i32],
        sums: &mut [i32],
    ) -> bool {
        let n = sums.len().min(bias.len()) / 4 * 4;
        if !taps.fit_channels(x, w, n) {
            return false;
        }
        let marked = taps.marked();
        // [the taps, quads left, next bias, next sums], read and advanced by the loop.
        let mut state: [usize; 4] = [
            marked.as_ptr() as usize,
            n / 4,
            bias.as_ptr() as usize,
            sums.as_mut_ptr() as usize,
        ];
        // SAFETY: `fit_channels(x, w, n)` holds with `n >= 4`: the list has at least one tap,
        // then the end mark (an input offset of `u32::MAX`, which no tap has), and for every
        // quad `q < n / 4` and tap, the 4 bytes at `x + 4 q` and at `w + 4 q` plus the tap's
        // offsets lie in `x` and `w` (unaligned `ldr` is allowed on these cores). Quad `q`
        // reads `bias[4 q..4 q + 4]` and writes `sums[4 q..4 q + 4]` (`ldrd`/`strd` need 4-byte
        // alignment, which `i32` has), within both as `4 q + 4 <= n`; `sums` is borrowed
        // mutably, so nothing else sees the writes. The taps are read 8 bytes each, aligned as
        // `[u32; 2]` is; the end mark is read once per quad, in the list. `state` is read and
        // written through its pointer, as the compiler knows (no `nomem`/`readonly`). The loop
        // runs `n / 4 >= 1` quads. No stack; `subs`/`cmn` set the flags, which the compiler
        // does not assume kept.
        unsafe {
            core::arch::asm!(
                "3:",
                "ldr {tp}, [{st}]",
                "ldr {xo}, [{st}, #8]",
                "ldrd {a0}, {a1}, [{xo}]",
                "ldrd {a2}, {a3}, [{xo}, #8]",
                "add {xo}, {xo}, #16",
                "str {xo}, [{st}, #8]",
                "ldrd {xo}, {wo}, [{tp}], #8",
                "2:",
                "ldr {xo}, [{xp}, {xo}]",
                "ldr {wo}, [{wp}, {wo}]",
                "sxtab16 {t}, {off}, {xo}, ror #8",
                "sxtab16 {xo}, {off}, {xo}",
                "sxtb16 {u}, {wo}, ror #8",
                "sxtb16 {wo}, {wo}",
                "smlabb {a1}, {t}, {u}, {a1}",
                "smlatt {a3}, {t}, {u}, {a3}",
                "smlabb {a0}, {xo}, {wo}, {a0}",
                "smlatt {a2}, {xo}, {wo}, {a2}",
                "ldrd {xo}, {wo}, [{tp}], #8",
                "cmn {xo}, #1",
                "bne 2b",
                "ldr {xo}, [{st}, #12]",
                "strd {a0}, {a1}, [{xo}]",
                "strd {a2}, {a3}, [{xo}, #8]",
                "add {xo}, {xo}, #16",
                "str {xo}, [{st}, #12]",
                "add {xp}, {xp}, #4",
                "add {wp}, {wp}, #4",
                "ldr {xo}, [{st}, #4]",
                "subs {xo}, {xo}, #1",
                "str {xo}, [{st}, #4]",
                "bne 3b",
                st = in(reg) state.as_mut_ptr(),
                xp = inout(reg) x.as_ptr() => _,
                wp = inout(reg) w.as_ptr() => _,
                off = in(reg) offsets,
                tp = out(reg) _,
                a0 = out(reg) _,
                a1 = out(reg) _,
                a2 = out(reg) _,
                a3 = out(reg) _,
                xo = out(reg) _,
                wo = out(reg) _,
                t = out(reg) _,
                u = out(reg) _,
                options(nostack),
            );
        }
        true
    }

    /// The loop of the default method in twelve registers: per quad of channels, the input
    /// word widened with the offset added (`SXTAB16`), the weight word loaded twice (once per
    /// half, which saves the register a second widened half would take), the four
    /// accumulators loaded and stored in pairs, four `SMLAxy` (4 multiply-accumulates in 17
    /// instructions).
    #[inline(always)]
    fn channels(acc: &mut [i32], x: &[i8], w: &[i8], offset: i32) {
        let n = (acc.len() / 4).min(x.len() / 4).min(w.len() / 4);
        if n == 0 {
            return;
        }
        let offsets = pair(offset, offset);
        // SAFETY: the loop runs `n >= 1` times; iteration `i` reads the 4 bytes at `4 i` of `x`
        // and of `w` (unaligned `ldr` is allowed on these cores) and reads and writes the four
        // `i32` at `4 i` of `acc` (`ldrd`/`strd` need 4-byte alignment, which `i32` has), and
        // `4 n` is within all three slices. `acc` is borrowed mutably, so nothing else sees
        // the writes. Otherwise only registers are written (the pointers and counter are
        // scratch copies, `_` after); no stack; `subs` sets the flags, which the compiler does
        // not assume kept.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {x}, [{xp}], #4",
                "sxtab16 {t}, {off}, {x}, ror #8",
                "sxtab16 {x}, {off}, {x}",
                "ldrd {a0}, {a1}, [{ap}]",
                "ldrd {a2}, {a3}, [{ap}, #8]",
                "ldr {u}, [{wp}]",
                "sxtb16 {u}, {u}, ror #8",
                "smlabb {a1}, {t}, {u}, {a1}",
                "smlatt {a3}, {t}, {u}, {a3}",
                "ldr {u}, [{wp}], #4",
                "sxtb16 {u}, {u}",
                "smlabb {a0}, {x}, {u}, {a0}",
                "smlatt {a2}, {x}, {u}, {a2}",
                "strd {a0}, {a1}, [{ap}], #8",
                "strd {a2}, {a3}, [{ap}], #8",
                "subs {n}, #1",
                "bne 2b",
                xp = inout(reg) x.as_ptr() => _,
                wp = inout(reg) w.as_ptr() => _,
                ap = inout(reg) acc.as_mut_ptr() => _,
                n = inout(reg) n => _,
                off = in(reg) offsets,
                a0 = out(reg) _,
                a1 = out(reg) _,
                a2 = out(reg) _,
                a3 = out(reg) _,
                x = out(reg) _,
                t = out(reg) _,
                u = out(reg) _,
                options(nostack),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words whose bytes cover the extremes and the signs.
    const WORDS: [u32; 8] = [
        0,
        0xFFFF_FFFF,
        0x8080_8080,
        0x7F7F_7F7F,
        0x017F_80FF,
        0x80FF_017F,
        0x1234_5678,
        0xDEAD_BEEF,
    ];

    #[test]
    fn emulated_instructions_follow_the_architecture_manual() {
        // sxtb16: bytes 0 and 2.
        assert_eq!(Emulated::sxtb16(0x017F_80FF), pair(-1, 0x7F));
        assert_eq!(Emulated::sxtb16_ror8(0x017F_80FF), pair(-128, 1));
        // sxtab16 wraps each lane at 16 bits.
        assert_eq!(
            Emulated::sxtab16(pair(0x7FFF, -32768), 0x00FF_0001),
            pair(-32768, -32769i32 & 0xFFFF)
        );
        // smlad: both products, wrapping.
        assert_eq!(
            Emulated::smlad(pair(-128, 127), pair(-128, -128), 5),
            5 + 16384 - 16256
        );
        assert_eq!(
            Emulated::smlad(pair(-32768, -32768), pair(-32768, -32768), i32::MAX),
            i32::MAX.wrapping_add(1 << 31)
        );
        assert_eq!(Emulated::smlabb(pair(3, 100), pair(-4, 100), 1), -11);
        assert_eq!(Emulated::smlatt(pair(100, 3), pair(100, -4), 1), -11);
    }

    #[test]
    fn widening_recovers_every_byte() {
        for &w in &WORDS {
            let bytes = w.to_le_bytes().map(|b| i32::from(b.cast_signed()));
            let (even, odd) = (Emulated::sxtb16(w), Emulated::sxtb16_ror8(w));
            assert_eq!(
                [lane(even, 0), lane(odd, 0), lane(even, 1), lane(odd, 1)],
                bytes
            );
            for &a in &WORDS {
                let sum = Emulated::sxtab16(a, w);
                assert_eq!(lane(sum, 0), (lane(a, 0) + bytes[0]) as i16 as i32);
                assert_eq!(lane(sum, 1), (lane(a, 1) + bytes[2]) as i16 as i32);
            }
        }
    }
}
