//! Which vector instructions the heavy kernels (the matrix product behind Conv, Gemm and
//! MatMul, the depthwise convolution) are compiled for, chosen once at run time.
//!
//! The kernels are written once, as plain Rust loops over fixed-size register tiles that the
//! compiler vectorises. On x86-64 the same code is also compiled inside functions with
//! `#[target_feature(enable = "avx2")]` and `#[target_feature(enable = "avx512f")]`, and the CPU
//! is asked once (`cpuid`, and `xgetbv` for the operating system's support of the wider
//! registers) which ones it can run. Every other target (a Cortex-M, AArch64) runs the portable
//! build. A build with those features on from the start (`-C target-cpu=native`) uses them
//! without asking.
//!
//! **Every level computes the same bits.** The matrix product's one arithmetic step is a fused
//! multiply-add, `s = fma(a, b, s)`: the exact `a * b + s` rounded once (IEEE 754
//! fusedMultiplyAdd), so every output element is `fma(a_k, b_k, ... fma(a_1, b_1, fma(a_0, b_0,
//! 0)))` in increasing `k`, whatever the tile sizes, the vector width or the blocking of `k` (a
//! block's partial sums go through memory and are picked up exactly). Each level computes that
//! one function its own way ([`MulAdd`]): `vfmadd` on 16, 8 or 4 lanes at AVX-512 and AVX2, and
//! `libm::fmaf` per lane in the portable build. A network gives identical results on every
//! x86-64 machine, at every level. The one exception is 32-bit Arm (a Cortex-M), whose portable
//! build multiplies and adds with two roundings (see [`fused`] for why): its results are its
//! own, the same on every run, within the tolerance of x86-64's. The other kernels never fuse:
//! Rust never contracts `a * b + c`.
//!
//! This is the one module of the crate with `unsafe` code: calling a `#[target_feature]`
//! function, which is sound only on a CPU that has the feature (checked by [`level`] before any
//! such call); `xgetbv`, which is available when `cpuid` says the OS enabled it; and the vector
//! intrinsics of the [`MulAdd`] tokens (and of their [`DepthwiseSteps`] and [`Transpose`]),
//! which exist only where their features are enabled.

#[cfg(target_arch = "x86_64")]
use core::sync::atomic::{AtomicU8, Ordering};

/// A set of vector instructions the kernels can be compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The target's baseline (SSE2 on x86-64; scalar on a Cortex-M4F).
    Portable,
    /// x86-64 AVX2 (256-bit vectors).
    Avx2,
    /// x86-64 AVX-512F (512-bit vectors).
    Avx512,
}

/// `0`: not asked yet; otherwise `1 + Level as u8`.
#[cfg(target_arch = "x86_64")]
static DETECTED: AtomicU8 = AtomicU8::new(0);
/// The most a caller allows ([`limit`]), as `Level as u8`.
#[cfg(target_arch = "x86_64")]
static LIMIT: AtomicU8 = AtomicU8::new(Level::Avx512 as u8);

#[cfg(target_arch = "x86_64")]
fn from_u8(v: u8) -> Level {
    match v {
        2 => Level::Avx512,
        1 => Level::Avx2,
        _ => Level::Portable,
    }
}

/// What this CPU (and its operating system) supports, asked once.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        let cached = DETECTED.load(Ordering::Relaxed);
        if cached != 0 {
            return from_u8(cached - 1);
        }
        let level = ask_cpu();
        DETECTED.store(level as u8 + 1, Ordering::Relaxed);
        level
    }
    #[cfg(not(target_arch = "x86_64"))]
    Level::Portable
}

/// The level the kernels run at: [`detected`], capped by [`limit`].
#[inline]
pub fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        detected().min(from_u8(LIMIT.load(Ordering::Relaxed)))
    }
    #[cfg(not(target_arch = "x86_64"))]
    Level::Portable
}

/// Caps the level the kernels use from now on (all threads): for tests and benchmarks of the
/// narrower builds, which compute the same bits. `limit(Level::Avx512)` lifts the cap.
pub fn limit(most: Level) {
    #[cfg(target_arch = "x86_64")]
    LIMIT.store(most as u8, Ordering::Relaxed);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = most;
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, unused_unsafe)] // `__cpuid` is safe on recent compilers, unsafe on older
fn ask_cpu() -> Level {
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
    if cfg!(all(target_feature = "avx512f", target_feature = "fma")) {
        return Level::Avx512;
    }
    // SAFETY: `cpuid` exists on every x86-64 CPU.
    let leaf0 = unsafe { __cpuid(0) };
    // SAFETY: as above.
    let leaf1 = unsafe { __cpuid(1) };
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    let avx = leaf1.ecx & (1 << 28) != 0;
    // Both wide levels run the product's fused multiply-adds as `vfmadd` (FMA3).
    let fma = leaf1.ecx & (1 << 12) != 0;
    if leaf0.eax < 7 || !osxsave || !avx || !fma {
        return Level::Portable;
    }
    // SAFETY: CPUID.1:ECX.OSXSAVE (checked above) says the OS enabled XSAVE, so `xgetbv` exists.
    let xcr0 = unsafe { _xgetbv(0) };
    // SAFETY: `cpuid` exists on every x86-64 CPU; leaf 7 exists (checked above).
    let leaf7 = unsafe { __cpuid_count(7, 0) };
    let ymm = xcr0 & 0b110 == 0b110; // SSE and AVX state saved by the OS
    let zmm = xcr0 & 0b1110_0110 == 0b1110_0110; // and the opmask and upper ZMM state
    if zmm && leaf7.ebx & (1 << 16) != 0 {
        Level::Avx512
    } else if ymm && leaf7.ebx & (1 << 5) != 0 {
        Level::Avx2
    } else {
        Level::Portable
    }
}

/// `dispatch!(portable, avx2, avx512, (args..))`: a `match` on [`level`] that calls
/// `avx512(args..)` or `avx2(args..)` (the same `#[inline(always)]` body wrapped in a function
/// with `#[target_feature(enable = "avx512f,fma")]` or `"avx2,fma"`) on x86-64 when the CPU has the
/// feature, and `portable(args..)` otherwise. The `unsafe` call is sound because [`level`] never
/// returns a level the CPU lacks.
macro_rules! dispatch {
    ($portable:expr, $avx2:path, $avx512:path, ($($arg:expr),*)) => {{
        match $crate::simd::level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level` returns `Avx512` only when the CPU and OS support AVX-512F and FMA.
            $crate::simd::Level::Avx512 => {
                #[allow(unsafe_code)]
                unsafe {
                    $avx512($($arg),*)
                }
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level` returns `Avx2` only when the CPU and OS support AVX2 and FMA.
            $crate::simd::Level::Avx2 => {
                #[allow(unsafe_code)]
                unsafe {
                    $avx2($($arg),*)
                }
            }
            _ => $portable($($arg),*),
        }
    }};
}
pub(crate) use dispatch;

/// The matrix product's step on one row of a tile: `s[j] = fma(a, b[j], s[j])` for every `j`,
/// each the exact `a * b[j] + s[j]` rounded once. A value of the type is the proof that its
/// instructions can run: the vector ones are made only inside functions compiled for their
/// features, so the product takes one as an argument and every level computes the same bits.
///
/// Every level's `mul_add` is `#[inline(always)]` in optimised builds: it is called inside the
/// micro-kernels' loops, and once LLVM left it out of line (a plain `#[inline]` in a crate of
/// 256 codegen units), its intrinsics became calls and whole networks ran 1.5-8x slower. Debug
/// builds keep a plain `#[inline]`: there every inlined copy keeps stack slots of its own, and
/// the direct Conv's tiles (hundreds of calls in one function) overflowed a test thread's stack.
pub(crate) trait MulAdd: Copy {
    /// `s[j] = fma(a, b[j], s[j])` for `j` in `0..W`.
    fn mul_add<const W: usize>(self, s: &mut [f32; W], a: f32, b: &[f32; W]);
}

/// The depthwise Conv's vector steps, on the same tokens as [`MulAdd`]. Its sums are
/// `s + a * b`, a product then a sum, each rounded (never fused: the direct method's bits, which
/// Rust's `s += a * b` gives on every target). At AVX2 and AVX-512 the vector instructions are
/// named, not left to the compiler: its vectorisation of these steps across a block of sums, or
/// of a stride-2 row's split into its even and odd columns, came out 1.5 to 10 times slower than
/// the instructions, and changed with the code around it.
pub(crate) trait DepthwiseSteps: Copy {
    /// `s[j] = s[j] + a[j] * b[j]` for `j` in `0..16`.
    fn mul_then_add(self, s: &mut [f32; 16], a: &[f32; 16], b: &[f32; 16]);
    /// `s[j] = s[j] + a * b[j]` for `j` in `0..16`.
    fn scale_then_add(self, s: &mut [f32; 16], a: f32, b: &[f32; 16]);
    /// `even[j] = pairs[2 j]` and `odd[j] = pairs[2 j + 1]` for `j` in `0..16`.
    fn split_pairs(self, pairs: &[f32; 32], even: &mut [f32; 16], odd: &mut [f32; 16]);
    /// The same for a row's last pairs (fewer than 16): `even[j] = pairs[2 j]` and
    /// `odd[j] = pairs[2 j + 1]` for `j` below the least of `pairs.len() / 2`, `even.len()`
    /// and `odd.len()`; nothing else is read or written.
    #[inline(always)]
    fn split_pairs_tail(self, pairs: &[f32], even: &mut [f32], odd: &mut [f32]) {
        for ((pair, e), o) in pairs.chunks_exact(2).zip(even).zip(odd) {
            *e = pair[0];
            *o = pair[1];
        }
    }
}

/// A 16 x 16 block of floats turned around its diagonal (`m[i][j]` and `m[j][i]` swapped), on
/// the same tokens as [`MulAdd`]: the direct Conv's tiles hold output channels across the lanes
/// and pixels down the rows, and the output wants each channel's pixels in a row. Only moves
/// words: every level gives the same bits. At AVX-512 the 64 shuffles of a 4-stage network
/// (pairs of rows, quads, 128-bit lanes twice) instead of 256 single-word moves.
pub(crate) trait Transpose: Copy {
    /// `m[i][j]` becomes `m[j][i]` for every `i`, `j`.
    #[inline(always)]
    fn transpose16(self, m: &mut [[f32; 16]; 16]) {
        for i in 1..16 {
            // Row `i`'s words left of the diagonal and column `i`'s above it.
            let (above, below) = m.split_at_mut(i);
            for (j, row) in above.iter_mut().enumerate() {
                core::mem::swap(&mut below[0][j], &mut row[i]);
            }
        }
    }

    /// The words `starts[i]..starts[i] + n` of `src` (`n` at most 16) of 16 runs, turned:
    /// `m[j][i] = src[starts[i] + j]` for `j < n`, the rows of `m` from `n` on zeros. False
    /// (and `m` unspecified) if a run does not lie in `src`.
    #[inline(always)]
    fn gather16(
        self,
        src: &[f32],
        starts: &[usize; 16],
        n: usize,
        m: &mut [[f32; 16]; 16],
    ) -> bool {
        let n = n.min(16);
        for (row, &start) in m.iter_mut().zip(starts) {
            let Some(run) = start.checked_add(n).and_then(|end| src.get(start..end)) else {
                return false;
            };
            match <&[f32; 16]>::try_from(run) {
                // A whole row as one fixed-size move (a run of a length known only at run time
                // is a call to `memcpy`).
                Ok(words) => *row = *words,
                Err(_) => {
                    let (head, tail) = row.split_at_mut(n);
                    head.copy_from_slice(run);
                    tail.fill(0.0);
                }
            }
        }
        self.transpose16(m);
        true
    }

    /// `m` turned into 16 runs of `dst`: `dst[starts[i] + j] = m[j][i]` for `i < lanes` and
    /// `j < n` (`n` at most 16); nothing else of `dst` is written, and `m` is left unspecified
    /// (the portable build turns it in place). False (and nothing written to `dst`) if one of
    /// those runs does not lie in `dst`.
    #[inline(always)]
    fn scatter16(
        self,
        m: &mut [[f32; 16]; 16],
        dst: &mut [f32],
        starts: &[usize; 16],
        lanes: usize,
        n: usize,
    ) -> bool {
        let (lanes, n) = (lanes.min(16), n.min(16));
        if !runs_lie_in(dst.len(), &starts[..lanes], n) {
            return false;
        }
        self.transpose16(m);
        for (row, &start) in m.iter().zip(&starts[..lanes]) {
            match <&mut [f32; 16]>::try_from(&mut dst[start..start + n]) {
                // A whole row as one fixed-size move, as above.
                Ok(words) => *words = *row,
                Err(_) => dst[start..start + n].copy_from_slice(&row[..n]),
            }
        }
        true
    }
}

/// Whether every run `start..start + n` lies in a slice of `len` words.
#[inline(always)]
fn runs_lie_in(len: usize, starts: &[usize], n: usize) -> bool {
    starts
        .iter()
        .all(|&start| start.checked_add(n).is_some_and(|end| end <= len))
}

impl Transpose for ScalarFma {}

/// An 8 x 8 turn at AVX2 on 8 row vectors `v` (an array of `__m256`): the columns, `out[j]`
/// column `j`, by 24 shuffles (pairs of rows, quads, 128-bit halves). A macro, straight-line
/// code in its caller, which has AVX2 (a helper function would not inherit it).
#[cfg(target_arch = "x86_64")]
macro_rules! turn8_avx2 {
    ($v:expr) => {{
        use core::arch::x86_64::{
            __m256, _mm256_permute2f128_ps, _mm256_setzero_ps, _mm256_shuffle_ps,
            _mm256_unpackhi_ps, _mm256_unpacklo_ps,
        };
        let v: [__m256; 8] = $v;
        let mut t = [_mm256_setzero_ps(); 8];
        for i in 0..4 {
            t[2 * i] = _mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]);
        }
        let mut u = [_mm256_setzero_ps(); 8];
        for h in 0..2 {
            let (a0, a1, a2, a3) = (t[4 * h], t[4 * h + 1], t[4 * h + 2], t[4 * h + 3]);
            u[4 * h] = _mm256_shuffle_ps::<0x44>(a0, a2);
            u[4 * h + 1] = _mm256_shuffle_ps::<0xEE>(a0, a2);
            u[4 * h + 2] = _mm256_shuffle_ps::<0x44>(a1, a3);
            u[4 * h + 3] = _mm256_shuffle_ps::<0xEE>(a1, a3);
        }
        let mut out: [__m256; 8] = [_mm256_setzero_ps(); 8];
        for q in 0..4 {
            out[q] = _mm256_permute2f128_ps::<0x20>(u[q], u[4 + q]);
            out[4 + q] = _mm256_permute2f128_ps::<0x31>(u[q], u[4 + q]);
        }
        out
    }};
}

/// The AVX2 mask (a lane's sign bit set) of lanes `from..from + 8` that lie below `n`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes_below_avx2(n: usize, from: usize) -> [i32; 8] {
    let mut mask = [0i32; 8];
    for (j, m) in mask.iter_mut().enumerate() {
        if from + j < n {
            *m = -1;
        }
    }
    mask
}

#[cfg(target_arch = "x86_64")]
impl Transpose for Avx2Fma {
    /// Four 8 x 8 blocks, each turned by 24 shuffles; the blocks off the diagonal trade places.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn transpose16(self, m: &mut [[f32; 16]; 16]) {
        use core::arch::x86_64::{_mm256_loadu_ps, _mm256_setzero_ps, _mm256_storeu_ps};
        // SAFETY: a value of `Avx2Fma` exists only where AVX2 is enabled; every load and store
        // covers words `c..c + 8` (`c` 0 or 8) of one row of `m`.
        unsafe {
            // Rows `r..r + 8`, columns `c..c + 8` of `m`, turned: `out[j]` is column `c + j`.
            macro_rules! turned {
                ($r:expr, $c:expr) => {{
                    let mut v = [_mm256_setzero_ps(); 8];
                    for (i, v) in v.iter_mut().enumerate() {
                        *v = _mm256_loadu_ps(m[$r + i][$c..].as_ptr());
                    }
                    turn8_avx2!(v)
                }};
            }
            macro_rules! store {
                ($v:expr, $r:expr, $c:expr) => {{
                    for (j, v) in $v.iter().enumerate() {
                        _mm256_storeu_ps(m[$r + j][$c..].as_mut_ptr(), *v);
                    }
                }};
            }
            let a = turned!(0, 0);
            store!(a, 0, 0);
            let d = turned!(8, 8);
            store!(d, 8, 8);
            let b = turned!(0, 8);
            let c = turned!(8, 0);
            store!(b, 8, 0);
            store!(c, 0, 8);
        }
    }

    /// Each 8 x 8 quarter loaded straight from its eight runs (masked to the run's `n` words),
    /// turned in registers and stored to its place in `m`.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn gather16(
        self,
        src: &[f32],
        starts: &[usize; 16],
        n: usize,
        m: &mut [[f32; 16]; 16],
    ) -> bool {
        use core::arch::x86_64::{
            _mm256_loadu_si256, _mm256_maskload_ps, _mm256_setzero_ps, _mm256_storeu_ps,
        };
        let n = n.min(16);
        if !runs_lie_in(src.len(), starts, n) {
            return false;
        }
        let base = src.as_ptr();
        // SAFETY: AVX2 is enabled (an `Avx2Fma` exists). Each masked load reads words
        // `start + c + j` of `src` for the lanes `j` with `c + j < n` only (the others are
        // masked off, which neither reads nor faults, and `wrapping_add` forms their address
        // without a promise), and `runs_lie_in` checked words `start..start + n` lie in `src`;
        // each store covers 8 words of one row of `m`.
        unsafe {
            for c in [0, 8] {
                let bits = lanes_below_avx2(n, c);
                let mask = _mm256_loadu_si256(bits.as_ptr().cast());
                for r in [0, 8] {
                    let mut v = [_mm256_setzero_ps(); 8];
                    for (i, v) in v.iter_mut().enumerate() {
                        *v = _mm256_maskload_ps(base.wrapping_add(starts[r + i] + c), mask);
                    }
                    // `out[j]`: word `c + j` of runs `r..r + 8`, row `c + j` of `m`.
                    for (j, v) in turn8_avx2!(v).iter().enumerate() {
                        _mm256_storeu_ps(m[c + j][r..].as_mut_ptr(), *v);
                    }
                }
            }
        }
        true
    }

    /// Each 8 x 8 quarter of `m` loaded, turned in registers and stored to its eight runs
    /// (masked to the run's `n` words, only the first `lanes` runs).
    #[inline(always)]
    #[allow(unsafe_code)]
    fn scatter16(
        self,
        m: &mut [[f32; 16]; 16],
        dst: &mut [f32],
        starts: &[usize; 16],
        lanes: usize,
        n: usize,
    ) -> bool {
        use core::arch::x86_64::{
            _mm256_loadu_ps, _mm256_loadu_si256, _mm256_maskstore_ps, _mm256_setzero_ps,
        };
        let (lanes, n) = (lanes.min(16), n.min(16));
        if !runs_lie_in(dst.len(), &starts[..lanes], n) {
            return false;
        }
        let base = dst.as_mut_ptr();
        // SAFETY: AVX2 is enabled (an `Avx2Fma` exists). Each load covers 8 words of one row
        // of `m`. Each masked store writes words `start + r + k` of `dst` for the lanes `k`
        // with `r + k < n` only (the others masked off, neither written nor faulting, their
        // address formed by `wrapping_add`), of the first `lanes` runs only, whose words
        // `start..start + n` `runs_lie_in` checked lie in `dst`.
        unsafe {
            for r in [0, 8] {
                let bits = lanes_below_avx2(n, r);
                let mask = _mm256_loadu_si256(bits.as_ptr().cast());
                for c in [0, 8] {
                    let mut v = [_mm256_setzero_ps(); 8];
                    for (i, v) in v.iter_mut().enumerate() {
                        *v = _mm256_loadu_ps(m[r + i][c..].as_ptr());
                    }
                    // `out[j]`: lane `c + j`'s words `r..r + 8`.
                    for (j, v) in turn8_avx2!(v).iter().enumerate() {
                        if c + j < lanes {
                            _mm256_maskstore_ps(base.wrapping_add(starts[c + j] + r), mask, *v);
                        }
                    }
                }
            }
        }
        true
    }
}

/// The 16 x 16 turn at AVX-512 on 16 row vectors `r` (an array of `__m512`): the columns, as
/// 16 vectors, `out[k]` column `k`. The 64 shuffles of a 4-stage network: rows in pairs within
/// each 128-bit lane, then quads, then the 128-bit lanes twice. A macro, straight-line code in
/// its caller, which has AVX-512 (a helper function would not inherit it).
#[cfg(target_arch = "x86_64")]
macro_rules! turn_avx512 {
    ($r:expr) => {{
        use core::arch::x86_64::{
            _mm512_setzero_ps, _mm512_shuffle_f32x4, _mm512_shuffle_ps, _mm512_unpackhi_ps,
            _mm512_unpacklo_ps,
        };
        let r = $r;
        // Within each 128-bit lane `l` (columns `4 l..4 l + 4`): rows 2i and 2i+1
        // interleaved, columns 4l, 4l+1 (`a[2i]`) and 4l+2, 4l+3 (`a[2i + 1]`).
        let mut a = [_mm512_setzero_ps(); 16];
        for i in 0..8 {
            a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        // `b[4 g + q]`'s lane `l`: column `4 l + q` of rows `4 g..4 g + 4`.
        let mut b = [_mm512_setzero_ps(); 16];
        for g in 0..4 {
            let (a0, a1, a2, a3) = (a[4 * g], a[4 * g + 1], a[4 * g + 2], a[4 * g + 3]);
            b[4 * g] = _mm512_shuffle_ps::<0x44>(a0, a2);
            b[4 * g + 1] = _mm512_shuffle_ps::<0xEE>(a0, a2);
            b[4 * g + 2] = _mm512_shuffle_ps::<0x44>(a1, a3);
            b[4 * g + 3] = _mm512_shuffle_ps::<0xEE>(a1, a3);
        }
        let mut out = [_mm512_setzero_ps(); 16];
        for q in 0..4 {
            // Lanes 0 and 2 (`even`), 1 and 3 (`odd`) of rows 0..8 and of rows 8..16.
            let even_lo = _mm512_shuffle_f32x4::<0x88>(b[q], b[4 + q]);
            let even_hi = _mm512_shuffle_f32x4::<0x88>(b[8 + q], b[12 + q]);
            let odd_lo = _mm512_shuffle_f32x4::<0xDD>(b[q], b[4 + q]);
            let odd_hi = _mm512_shuffle_f32x4::<0xDD>(b[8 + q], b[12 + q]);
            out[q] = _mm512_shuffle_f32x4::<0x88>(even_lo, even_hi);
            out[8 + q] = _mm512_shuffle_f32x4::<0xDD>(even_lo, even_hi);
            out[4 + q] = _mm512_shuffle_f32x4::<0x88>(odd_lo, odd_hi);
            out[12 + q] = _mm512_shuffle_f32x4::<0xDD>(odd_lo, odd_hi);
        }
        out
    }};
}

/// The mask of the first `n` (at most 16) lanes of a vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn first_lanes(n: usize) -> u16 {
    match n {
        0 => 0,
        16.. => u16::MAX,
        n => (1u16 << n) - 1,
    }
}

#[cfg(target_arch = "x86_64")]
impl Transpose for Avx512Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn transpose16(self, m: &mut [[f32; 16]; 16]) {
        use core::arch::x86_64::{_mm512_loadu_ps, _mm512_setzero_ps, _mm512_storeu_ps};
        // SAFETY: a value of `Avx512Fma` exists only where AVX-512F is enabled; each load and
        // store covers one row (16 floats) of `m`.
        unsafe {
            let mut r = [_mm512_setzero_ps(); 16];
            for (r, row) in r.iter_mut().zip(m.iter()) {
                *r = _mm512_loadu_ps(row.as_ptr());
            }
            let columns = turn_avx512!(r);
            for (row, v) in m.iter_mut().zip(columns) {
                _mm512_storeu_ps(row.as_mut_ptr(), v);
            }
        }
    }

    /// Each run loaded straight into a vector, masked to its `n` words (no word past them is
    /// read), turned in registers and stored: no copy through `m` before the turn, no word
    /// moved one at a time for a short run.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn gather16(
        self,
        src: &[f32],
        starts: &[usize; 16],
        n: usize,
        m: &mut [[f32; 16]; 16],
    ) -> bool {
        use core::arch::x86_64::{_mm512_maskz_loadu_ps, _mm512_setzero_ps, _mm512_storeu_ps};
        let n = n.min(16);
        if !runs_lie_in(src.len(), starts, n) {
            return false;
        }
        let (mask, base) = (first_lanes(n), src.as_ptr());
        // SAFETY: AVX-512F is enabled (an `Avx512Fma` exists); each masked load reads words
        // `start..start + n` of `src` only (the lanes past `n` are masked off, which neither
        // reads nor faults), and `runs_lie_in` checked that they lie in `src`; each store
        // covers one row of `m`.
        unsafe {
            let mut r = [_mm512_setzero_ps(); 16];
            for (r, &start) in r.iter_mut().zip(starts) {
                *r = _mm512_maskz_loadu_ps(mask, base.add(start));
            }
            let columns = turn_avx512!(r);
            for (row, v) in m.iter_mut().zip(columns) {
                _mm512_storeu_ps(row.as_mut_ptr(), v);
            }
        }
        true
    }

    /// `m`'s rows loaded, turned in registers, each column stored to its run masked to `n`
    /// words: nothing past them written, no word moved one at a time for a short run.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn scatter16(
        self,
        m: &mut [[f32; 16]; 16],
        dst: &mut [f32],
        starts: &[usize; 16],
        lanes: usize,
        n: usize,
    ) -> bool {
        use core::arch::x86_64::{_mm512_loadu_ps, _mm512_mask_storeu_ps, _mm512_setzero_ps};
        let (lanes, n) = (lanes.min(16), n.min(16));
        if !runs_lie_in(dst.len(), &starts[..lanes], n) {
            return false;
        }
        let (mask, base) = (first_lanes(n), dst.as_mut_ptr());
        // SAFETY: AVX-512F is enabled (an `Avx512Fma` exists); each load covers one row of
        // `m`; each masked store writes words `start..start + n` of `dst` only (the lanes past
        // `n` are masked off), which `runs_lie_in` checked lie in `dst`.
        unsafe {
            let mut r = [_mm512_setzero_ps(); 16];
            for (r, row) in r.iter_mut().zip(m.iter()) {
                *r = _mm512_loadu_ps(row.as_ptr());
            }
            let columns = turn_avx512!(r);
            for (v, &start) in columns.iter().zip(&starts[..lanes]) {
                _mm512_mask_storeu_ps(base.add(start), mask, *v);
            }
        }
        true
    }
}

/// A max pool's step, on the same tokens as [`MulAdd`]: `out[j] = taps[j]` where `taps[j] >
/// out[j]`, else `out[j]` is kept (so a NaN tap is ignored and of equal taps, -0 and +0, the
/// first is kept). That is exactly `maxps(taps, out)`; the vector levels name the instruction
/// because the compiler turned the select into a masked store, which a following load of the
/// same row cannot forward from (three times slower than the baseline build).
///
/// The channel-lanes depthwise Conv takes its Relu and Clip the same way (`relu(x)` is
/// `take_greater(x, 0)`, `clip(x, lo, hi)` is `take_less(take_greater(x, lo), hi)`, NaN and -0
/// included).
pub(crate) trait TakeGreater: Copy {
    /// `out[j] = if taps[j] > out[j] { taps[j] } else { out[j] }` for `j` in `0..16`.
    #[inline(always)]
    fn take_greater(self, out: &mut [f32; 16], taps: &[f32; 16]) {
        for (o, &v) in out.iter_mut().zip(taps) {
            *o = if v > *o { v } else { *o };
        }
    }

    /// `out[j] = if taps[j] < out[j] { taps[j] } else { out[j] }` for `j` in `0..16`.
    #[inline(always)]
    fn take_less(self, out: &mut [f32; 16], taps: &[f32; 16]) {
        for (o, &v) in out.iter_mut().zip(taps) {
            *o = if v < *o { v } else { *o };
        }
    }
}

impl TakeGreater for ScalarFma {}

#[cfg(target_arch = "x86_64")]
impl TakeGreater for Avx2Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn take_greater(self, out: &mut [f32; 16], taps: &[f32; 16]) {
        use core::arch::x86_64::{_mm256_loadu_ps, _mm256_max_ps, _mm256_storeu_ps};
        let (op, tp) = (out.as_mut_ptr(), taps.as_ptr());
        // SAFETY: a value of `Avx2Fma` exists only where AVX2 is enabled; the loads and stores
        // cover words `0..8` and `8..16` of `out` and `taps`. `vmaxps a, b` is `a > b ? a : b`.
        unsafe {
            for half in [0, 8] {
                let v = _mm256_max_ps(_mm256_loadu_ps(tp.add(half)), _mm256_loadu_ps(op.add(half)));
                _mm256_storeu_ps(op.add(half), v);
            }
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn take_less(self, out: &mut [f32; 16], taps: &[f32; 16]) {
        use core::arch::x86_64::{_mm256_loadu_ps, _mm256_min_ps, _mm256_storeu_ps};
        let (op, tp) = (out.as_mut_ptr(), taps.as_ptr());
        // SAFETY: as in `take_greater`. `vminps a, b` is `a < b ? a : b`.
        unsafe {
            for half in [0, 8] {
                let v = _mm256_min_ps(_mm256_loadu_ps(tp.add(half)), _mm256_loadu_ps(op.add(half)));
                _mm256_storeu_ps(op.add(half), v);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl TakeGreater for Avx512Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn take_greater(self, out: &mut [f32; 16], taps: &[f32; 16]) {
        use core::arch::x86_64::{_mm512_loadu_ps, _mm512_max_ps, _mm512_storeu_ps};
        let (op, tp) = (out.as_mut_ptr(), taps.as_ptr());
        // SAFETY: a value of `Avx512Fma` exists only where AVX-512F is enabled; the load and
        // store cover the 16 words of `out` and `taps`. `vmaxps a, b` is `a > b ? a : b`.
        unsafe {
            _mm512_storeu_ps(op, _mm512_max_ps(_mm512_loadu_ps(tp), _mm512_loadu_ps(op)));
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn take_less(self, out: &mut [f32; 16], taps: &[f32; 16]) {
        use core::arch::x86_64::{_mm512_loadu_ps, _mm512_min_ps, _mm512_storeu_ps};
        let (op, tp) = (out.as_mut_ptr(), taps.as_ptr());
        // SAFETY: as in `take_greater`. `vminps a, b` is `a < b ? a : b`.
        unsafe {
            _mm512_storeu_ps(op, _mm512_min_ps(_mm512_loadu_ps(tp), _mm512_loadu_ps(op)));
        }
    }
}

/// Sixteen words of a row read from a column that may lie partly outside it: `out[j] =
/// row[from + j]` where `0 <= from + j < row.len()`, NaN elsewhere. The max pool reads its
/// taps this way straight from the input rows, with no padded copy: a copy's narrow stores
/// stall the wide load that reads them back. Inside the row it is one load; at an edge the
/// vector levels load only the words inside (masked loads, which touch no word outside).
#[cfg(target_arch = "x86_64")]
pub(crate) trait LoadOrNan: Copy {
    /// `out[j] = row[from + j]`, or NaN where `from + j` is outside `row`, for `j` in `0..16`.
    fn load_or_nan(self, row: &[f32], from: isize, out: &mut [f32; 16]);
}

#[cfg(target_arch = "x86_64")]
impl LoadOrNan for Avx2Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn load_or_nan(self, row: &[f32], from: isize, out: &mut [f32; 16]) {
        use core::arch::x86_64::{
            _mm256_add_epi32, _mm256_and_si256, _mm256_blendv_ps, _mm256_castsi256_ps,
            _mm256_cmpgt_epi32, _mm256_loadu_ps, _mm256_maskload_ps, _mm256_set1_epi32,
            _mm256_set1_ps, _mm256_setr_epi32, _mm256_storeu_ps,
        };
        let len = row.len() as isize;
        let op = out.as_mut_ptr();
        for half in [0, 8] {
            let at = from + half;
            // SAFETY: a value of `Avx2Fma` exists only where AVX2 is enabled. The store covers
            // words `half..half + 8` of `out`. The plain load reads words `at..at + 8` of `row`,
            // checked to be inside it. The masked load enables only the lanes whose word
            // `at + j` is inside `row` (`0 <= at + j < len`); `vmaskmovps` does not touch the
            // others, so its address may point outside `row` (made with `wrapping_offset`).
            unsafe {
                let v = if at >= 0 && at + 8 <= len {
                    _mm256_loadu_ps(row.as_ptr().add(at as usize))
                } else {
                    let lanes = _mm256_add_epi32(
                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                        _mm256_set1_epi32(at.clamp(-16, len) as i32),
                    );
                    let inside = _mm256_and_si256(
                        _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(-1)),
                        _mm256_cmpgt_epi32(
                            _mm256_set1_epi32(len.min(i32::MAX as isize) as i32),
                            lanes,
                        ),
                    );
                    let loaded = _mm256_maskload_ps(row.as_ptr().wrapping_offset(at), inside);
                    _mm256_blendv_ps(
                        _mm256_set1_ps(f32::NAN),
                        loaded,
                        _mm256_castsi256_ps(inside),
                    )
                };
                _mm256_storeu_ps(op.add(half as usize), v);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl LoadOrNan for Avx512Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn load_or_nan(self, row: &[f32], from: isize, out: &mut [f32; 16]) {
        use core::arch::x86_64::{
            _mm512_loadu_ps, _mm512_mask_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps,
        };
        let len = row.len() as isize;
        // SAFETY: a value of `Avx512Fma` exists only where AVX-512F is enabled. The store covers
        // the 16 words of `out`. The plain load reads words `from..from + 16` of `row`, checked
        // to be inside it. The masked load enables only lanes `lo..hi`, whose words `from + j`
        // are inside `row`; AVX-512 suppresses the other lanes' accesses (and faults), so its
        // address may point outside `row` (made with `wrapping_offset`).
        unsafe {
            let v = if from >= 0 && from + 16 <= len {
                _mm512_loadu_ps(row.as_ptr().add(from as usize))
            } else {
                let lo = (-from).clamp(0, 16) as u32;
                let hi = (len - from).clamp(0, 16) as u32;
                let below = |n: u32| if n >= 16 { 0xffff } else { (1u32 << n) - 1 };
                let mask = (below(hi) & !below(lo)) as u16;
                _mm512_mask_loadu_ps(
                    _mm512_set1_ps(f32::NAN),
                    mask,
                    row.as_ptr().wrapping_offset(from),
                )
            };
            _mm512_storeu_ps(out.as_mut_ptr(), v);
        }
    }
}

impl DepthwiseSteps for ScalarFma {
    #[inline(always)]
    fn mul_then_add(self, s: &mut [f32; 16], a: &[f32; 16], b: &[f32; 16]) {
        for ((s, &a), &b) in s.iter_mut().zip(a).zip(b) {
            *s += a * b;
        }
    }

    #[inline(always)]
    fn scale_then_add(self, s: &mut [f32; 16], a: f32, b: &[f32; 16]) {
        for (s, &b) in s.iter_mut().zip(b) {
            *s += a * b;
        }
    }

    #[inline(always)]
    fn split_pairs(self, pairs: &[f32; 32], even: &mut [f32; 16], odd: &mut [f32; 16]) {
        for (j, pair) in pairs.chunks_exact(2).enumerate() {
            even[j] = pair[0];
            odd[j] = pair[1];
        }
    }
}

/// One lane at a time with [`fused`]: the portable build.
#[derive(Clone, Copy)]
pub(crate) struct ScalarFma;

impl MulAdd for ScalarFma {
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn mul_add<const W: usize>(self, s: &mut [f32; W], a: f32, b: &[f32; W]) {
        for (s, &b) in s.iter_mut().zip(b) {
            *s = fused(a, b, *s);
        }
    }
}

/// The product's step `a * b + c` for one lane: fused (rounded once, `libm::fmaf`: `vfmadd` on
/// an x86 CPU with FMA, `fmadd` on AArch64, exact in software elsewhere) on every target but
/// 32-bit Arm, where it is a multiply and an add, each rounded. Stable Rust cannot name the
/// Cortex-M4F's `vfma.f32` (its single-precision registers are not an `asm!` operand class
/// without the double-precision `vfp2` feature, and the FMA intrinsics are unstable), and a
/// software `fmaf` there costs tens of instructions per term. So a Cortex-M computes its own
/// bits, the same on every run and at every blocking, within the tolerance of x86-64's.
#[inline(always)]
pub(crate) fn fused(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "arm")]
    {
        a * b + c
    }
    #[cfg(not(target_arch = "arm"))]
    {
        libm::fmaf(a, b, c)
    }
}

/// `vfmadd` on 8 and 4 lanes (AVX2 and FMA).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx2Fma(());

#[cfg(target_arch = "x86_64")]
impl Avx2Fma {
    /// The token, made only where AVX2 and FMA are enabled (the product's AVX2 build).
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn new() -> Avx2Fma {
        Avx2Fma(())
    }
}

#[cfg(target_arch = "x86_64")]
impl MulAdd for Avx2Fma {
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[allow(unsafe_code)]
    fn mul_add<const W: usize>(self, s: &mut [f32; W], a: f32, b: &[f32; W]) {
        use core::arch::x86_64::{
            _mm_cvtss_f32, _mm_fmadd_ps, _mm_fmadd_ss, _mm_loadu_ps, _mm_set_ss, _mm_set1_ps,
            _mm_storeu_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps,
        };
        let (sp, bp) = (s.as_mut_ptr(), b.as_ptr());
        let mut j = 0;
        // SAFETY: a value of `Avx2Fma` exists only where AVX2 and FMA are enabled (its
        // constructor is a `target_feature` function), and every load and store covers lanes
        // `j..j + 8` or `j..j + 4` of the `W` floats of `s` and `b` (the loops stop before `W`).
        unsafe {
            while j + 8 <= W {
                let sum = _mm256_fmadd_ps(
                    _mm256_set1_ps(a),
                    _mm256_loadu_ps(bp.add(j)),
                    _mm256_loadu_ps(sp.add(j)),
                );
                _mm256_storeu_ps(sp.add(j), sum);
                j += 8;
            }
            while j + 4 <= W {
                let sum = _mm_fmadd_ps(
                    _mm_set1_ps(a),
                    _mm_loadu_ps(bp.add(j)),
                    _mm_loadu_ps(sp.add(j)),
                );
                _mm_storeu_ps(sp.add(j), sum);
                j += 4;
            }
            while j < W {
                s[j] = _mm_cvtss_f32(_mm_fmadd_ss(
                    _mm_set_ss(a),
                    _mm_set_ss(b[j]),
                    _mm_set_ss(s[j]),
                ));
                j += 1;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl DepthwiseSteps for Avx2Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn mul_then_add(self, s: &mut [f32; 16], a: &[f32; 16], b: &[f32; 16]) {
        use core::arch::x86_64::{_mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_storeu_ps};
        let (sp, ap, bp) = (s.as_mut_ptr(), a.as_ptr(), b.as_ptr());
        // SAFETY: a value of `Avx2Fma` exists only where AVX2 is enabled; every load and store
        // covers lanes `j..j + 8` (`j` 0 or 8) of the 16 floats of `s`, `a` and `b`.
        unsafe {
            for j in [0, 8] {
                let product = _mm256_mul_ps(_mm256_loadu_ps(ap.add(j)), _mm256_loadu_ps(bp.add(j)));
                _mm256_storeu_ps(
                    sp.add(j),
                    _mm256_add_ps(_mm256_loadu_ps(sp.add(j)), product),
                );
            }
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn scale_then_add(self, s: &mut [f32; 16], a: f32, b: &[f32; 16]) {
        use core::arch::x86_64::{
            _mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_set1_ps, _mm256_storeu_ps,
        };
        let (sp, bp) = (s.as_mut_ptr(), b.as_ptr());
        // SAFETY: as in `mul_then_add`.
        unsafe {
            let a = _mm256_set1_ps(a);
            for j in [0, 8] {
                let product = _mm256_mul_ps(a, _mm256_loadu_ps(bp.add(j)));
                _mm256_storeu_ps(
                    sp.add(j),
                    _mm256_add_ps(_mm256_loadu_ps(sp.add(j)), product),
                );
            }
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn split_pairs(self, pairs: &[f32; 32], even: &mut [f32; 16], odd: &mut [f32; 16]) {
        use core::arch::x86_64::{
            _mm256_castpd_ps, _mm256_castps_pd, _mm256_loadu_ps, _mm256_permute4x64_pd,
            _mm256_shuffle_ps, _mm256_storeu_ps,
        };
        let (pp, ep, op) = (pairs.as_ptr(), even.as_mut_ptr(), odd.as_mut_ptr());
        // SAFETY: a value of `Avx2Fma` exists only where AVX2 is enabled; the loads cover words
        // `16 h..16 h + 16` of the 32 of `pairs`, the stores words `8 h..8 h + 8` of the 16 of
        // `even` and `odd` (`h` 0 or 1).
        unsafe {
            for h in 0..2 {
                let (lo, hi) = (
                    _mm256_loadu_ps(pp.add(16 * h)),
                    _mm256_loadu_ps(pp.add(16 * h + 8)),
                );
                // Within each 128-bit half: lo's two evens then hi's two evens (odds alike);
                // the halves' 64-bit quarters then reordered 0, 2, 1, 3.
                let e = _mm256_shuffle_ps::<0b10_00_10_00>(lo, hi);
                let o = _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi);
                let e =
                    _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(e)));
                let o =
                    _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(o)));
                _mm256_storeu_ps(ep.add(8 * h), e);
                _mm256_storeu_ps(op.add(8 * h), o);
            }
        }
    }
}

/// `vfmadd` on 16, 8 and 4 lanes (AVX-512F and FMA).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx512Fma(());

#[cfg(target_arch = "x86_64")]
impl Avx512Fma {
    /// The token, made only where AVX-512F and FMA are enabled (the product's AVX-512 build).
    #[target_feature(enable = "avx512f,fma")]
    pub(crate) fn new() -> Avx512Fma {
        Avx512Fma(())
    }
}

#[cfg(target_arch = "x86_64")]
impl MulAdd for Avx512Fma {
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[allow(unsafe_code)]
    fn mul_add<const W: usize>(self, s: &mut [f32; W], a: f32, b: &[f32; W]) {
        use core::arch::x86_64::{
            _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps,
        };
        if !W.is_multiple_of(16) {
            // The narrower tiles (8, 4 or 1 columns) as at AVX2, whose instructions AVX-512F
            // implies. SAFETY: a value of `Avx512Fma` exists only where AVX-512F and FMA are
            // enabled (its constructor is a `target_feature` function), so AVX2 and FMA are.
            let narrow = unsafe { Avx2Fma::new() };
            narrow.mul_add(s, a, b);
            return;
        }
        let (sp, bp) = (s.as_mut_ptr(), b.as_ptr());
        // SAFETY: as above, AVX-512F and FMA are enabled; every load and store covers lanes
        // `j..j + 16` of the `W` floats of `s` and `b` (`W` is a multiple of 16).
        unsafe {
            let mut j = 0;
            while j < W {
                let sum = _mm512_fmadd_ps(
                    _mm512_set1_ps(a),
                    _mm512_loadu_ps(bp.add(j)),
                    _mm512_loadu_ps(sp.add(j)),
                );
                _mm512_storeu_ps(sp.add(j), sum);
                j += 16;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl DepthwiseSteps for Avx512Fma {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn mul_then_add(self, s: &mut [f32; 16], a: &[f32; 16], b: &[f32; 16]) {
        use core::arch::x86_64::{_mm512_add_ps, _mm512_loadu_ps, _mm512_mul_ps, _mm512_storeu_ps};
        let (sp, ap, bp) = (s.as_mut_ptr(), a.as_ptr(), b.as_ptr());
        // SAFETY: a value of `Avx512Fma` exists only where AVX-512F is enabled; each load and
        // store covers the 16 floats of `s`, `a` or `b`.
        unsafe {
            let product = _mm512_mul_ps(_mm512_loadu_ps(ap), _mm512_loadu_ps(bp));
            _mm512_storeu_ps(sp, _mm512_add_ps(_mm512_loadu_ps(sp), product));
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn scale_then_add(self, s: &mut [f32; 16], a: f32, b: &[f32; 16]) {
        use core::arch::x86_64::{
            _mm512_add_ps, _mm512_loadu_ps, _mm512_mul_ps, _mm512_set1_ps, _mm512_storeu_ps,
        };
        let (sp, bp) = (s.as_mut_ptr(), b.as_ptr());
        // SAFETY: as in `mul_then_add`.
        unsafe {
            let product = _mm512_mul_ps(_mm512_set1_ps(a), _mm512_loadu_ps(bp));
            _mm512_storeu_ps(sp, _mm512_add_ps(_mm512_loadu_ps(sp), product));
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn split_pairs(self, pairs: &[f32; 32], even: &mut [f32; 16], odd: &mut [f32; 16]) {
        use core::arch::x86_64::{
            _mm512_loadu_ps, _mm512_permutex2var_ps, _mm512_setr_epi32, _mm512_storeu_ps,
        };
        let (pp, ep, op) = (pairs.as_ptr(), even.as_mut_ptr(), odd.as_mut_ptr());
        // SAFETY: a value of `Avx512Fma` exists only where AVX-512F is enabled; the loads cover
        // the 32 words of `pairs` in two halves, the stores the 16 of `even` and of `odd`.
        unsafe {
            let (lo, hi) = (_mm512_loadu_ps(pp), _mm512_loadu_ps(pp.add(16)));
            // Index `i < 16` picks `lo[i]`, `16 + i` picks `hi[i]`.
            let evens =
                _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
            let odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
            _mm512_storeu_ps(ep, _mm512_permutex2var_ps(lo, evens, hi));
            _mm512_storeu_ps(op, _mm512_permutex2var_ps(lo, odds, hi));
        }
    }

    /// The pairs loaded in two masked halves and split by the same two permutes, the halves
    /// stored masked: a row's last pairs in a few instructions rather than a word at a time.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn split_pairs_tail(self, pairs: &[f32], even: &mut [f32], odd: &mut [f32]) {
        use core::arch::x86_64::{
            _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_permutex2var_ps, _mm512_setr_epi32,
        };
        let k = (pairs.len() / 2).min(even.len()).min(odd.len());
        if k >= 16 {
            // Not a row's last pairs: one pair at a time, as the definition says.
            for ((pair, e), o) in pairs.chunks_exact(2).zip(even).zip(odd) {
                *e = pair[0];
                *o = pair[1];
            }
            return;
        }
        let words = 2 * k;
        let (pp, ep, op) = (pairs.as_ptr(), even.as_mut_ptr(), odd.as_mut_ptr());
        // SAFETY: AVX-512F is enabled (an `Avx512Fma` exists). The first masked load reads
        // words `0..min(2k, 16)` of `pairs`, the second words `16..2k` (none if `2k <= 16`:
        // its mask is empty and a masked-off lane neither reads nor faults, nor is `pp + 16`
        // dereferenced); `2k <= pairs.len()`. The stores write words `0..k` of `even` and
        // `odd`, which hold at least `k`.
        unsafe {
            let lo = _mm512_maskz_loadu_ps(first_lanes(words), pp);
            let hi =
                _mm512_maskz_loadu_ps(first_lanes(words.saturating_sub(16)), pp.wrapping_add(16));
            let evens =
                _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
            let odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
            _mm512_mask_storeu_ps(ep, first_lanes(k), _mm512_permutex2var_ps(lo, evens, hi));
            _mm512_mask_storeu_ps(op, first_lanes(k), _mm512_permutex2var_ps(lo, odds, hi));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every level's 16 x 16 transpose is the plain one.
    #[test]
    fn every_level_transposes() {
        let m: [[f32; 16]; 16] =
            core::array::from_fn(|i| core::array::from_fn(|j| (i * 16 + j) as f32));
        let mut plain = m;
        ScalarFma.transpose16(&mut plain);
        for i in 0..16 {
            for j in 0..16 {
                assert_eq!(plain[i][j], m[j][i]);
            }
        }
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,fma")]
            fn wide(m: &mut [[f32; 16]; 16]) {
                Avx512Fma::new().transpose16(m);
            }
            #[target_feature(enable = "avx2,fma")]
            fn narrow(m: &mut [[f32; 16]; 16]) {
                Avx2Fma::new().transpose16(m);
            }
            if detected() >= Level::Avx2 {
                let mut t = m;
                // SAFETY: the CPU has AVX2 and FMA (`detected`).
                #[allow(unsafe_code)]
                unsafe {
                    narrow(&mut t)
                };
                assert_eq!(t, plain);
            }
            if detected() >= Level::Avx512 {
                let mut t = m;
                // SAFETY: the CPU has AVX-512F and FMA (`detected`).
                #[allow(unsafe_code)]
                unsafe {
                    wide(&mut t)
                };
                assert_eq!(t, plain);
            }
        }
    }

    /// Every level's `gather16` and `scatter16` are their definitions: runs of 0 to 16 words
    /// turned in and out, past the runs nothing read into `m` (zeros) and nothing written in
    /// `dst`, fewer lanes than 16 written, and a run past the slice refused with nothing
    /// written.
    #[test]
    fn every_level_gathers_and_scatters_runs() {
        use std::vec;
        use std::vec::Vec;
        type Gather = dyn Fn(&[f32], &[usize; 16], usize, &mut [[f32; 16]; 16]) -> bool;
        type Scatter = dyn Fn(&mut [[f32; 16]; 16], &mut [f32], &[usize; 16], usize, usize) -> bool;
        let src: Vec<f32> = (0..600).map(|i| i as f32 + 0.5).collect();
        let starts: [usize; 16] = core::array::from_fn(|i| 7 + 37 * i);
        let check = |gather: &Gather, scatter: &Scatter| {
            for n in 0..=16 {
                let mut m = [[f32::NAN; 16]; 16];
                assert!(gather(&src, &starts, n, &mut m));
                for (j, row) in m.iter().enumerate() {
                    for (i, &v) in row.iter().enumerate() {
                        let want = if j < n { src[starts[i] + j] } else { 0.0 };
                        assert_eq!(v.to_bits(), want.to_bits(), "n {n}: m[{j}][{i}]");
                    }
                }
                for lanes in [0, 1, 9, 16] {
                    let mut dst = vec![-1.0f32; 600];
                    // A copy: `scatter16` leaves its `m` unspecified.
                    assert!(scatter(&mut m.clone(), &mut dst, &starts, lanes, n));
                    for (k, &v) in dst.iter().enumerate() {
                        let run = (0..lanes).find(|&i| (starts[i]..starts[i] + n).contains(&k));
                        let want = run.map_or(-1.0, |i| m[k - starts[i]][i]);
                        assert_eq!(v.to_bits(), want.to_bits(), "n {n} lanes {lanes}: dst[{k}]");
                    }
                }
            }
            // A run past the slice: refused, nothing written.
            let mut far = starts;
            far[5] = 595;
            let mut m = [[0.0f32; 16]; 16];
            assert!(!gather(&src, &far, 6, &mut m));
            assert!(gather(&src, &far, 5, &mut m));
            let mut dst = vec![-1.0f32; 600];
            assert!(!scatter(&mut m.clone(), &mut dst, &far, 16, 6));
            assert!(dst.iter().all(|&v| v == -1.0));
            assert!(scatter(&mut m, &mut dst, &far, 5, 6));
        };
        check(
            &|s, st, n, m| ScalarFma.gather16(s, st, n, m),
            &|m, d, st, l, n| ScalarFma.scatter16(m, d, st, l, n),
        );
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2,fma")]
            fn gather2(s: &[f32], st: &[usize; 16], n: usize, m: &mut [[f32; 16]; 16]) -> bool {
                Avx2Fma::new().gather16(s, st, n, m)
            }
            #[target_feature(enable = "avx2,fma")]
            fn scatter2(
                m: &mut [[f32; 16]; 16],
                d: &mut [f32],
                st: &[usize; 16],
                l: usize,
                n: usize,
            ) -> bool {
                Avx2Fma::new().scatter16(m, d, st, l, n)
            }
            #[target_feature(enable = "avx512f,fma")]
            fn gather5(s: &[f32], st: &[usize; 16], n: usize, m: &mut [[f32; 16]; 16]) -> bool {
                Avx512Fma::new().gather16(s, st, n, m)
            }
            #[target_feature(enable = "avx512f,fma")]
            fn scatter5(
                m: &mut [[f32; 16]; 16],
                d: &mut [f32],
                st: &[usize; 16],
                l: usize,
                n: usize,
            ) -> bool {
                Avx512Fma::new().scatter16(m, d, st, l, n)
            }
            // SAFETY (each call): the CPU has the level's features (`detected`).
            #[allow(unsafe_code)]
            if detected() >= Level::Avx2 {
                check(
                    &|s, st, n, m| unsafe { gather2(s, st, n, m) },
                    &|m, d, st, l, n| unsafe { scatter2(m, d, st, l, n) },
                );
            }
            #[allow(unsafe_code)]
            if detected() >= Level::Avx512 {
                check(
                    &|s, st, n, m| unsafe { gather5(s, st, n, m) },
                    &|m, d, st, l, n| unsafe { scatter5(m, d, st, l, n) },
                );
            }
        }
    }

    /// Every level's `split_pairs_tail` is its definition: 0 to 17 pairs (a trailing odd word
    /// ignored) into outputs as long as the pairs or longer, nothing past them written.
    #[test]
    fn every_level_splits_a_rows_last_pairs() {
        use std::vec;
        use std::vec::Vec;
        type Split = dyn Fn(&[f32], &mut [f32], &mut [f32]);
        let check = |split: &Split| {
            for k in 0..=17 {
                for extra in [0, 1] {
                    let pairs: Vec<f32> = (0..2 * k + extra).map(|i| i as f32 + 0.25).collect();
                    for room in [k, k + 3] {
                        let (mut even, mut odd) = (vec![-1.0f32; room], vec![-1.0f32; room]);
                        split(&pairs, &mut even, &mut odd);
                        for j in 0..room {
                            let (e, o) = if j < k {
                                (pairs[2 * j], pairs[2 * j + 1])
                            } else {
                                (-1.0, -1.0)
                            };
                            assert_eq!((even[j], odd[j]), (e, o), "k {k} room {room} j {j}");
                        }
                    }
                }
            }
        };
        check(&|p, e, o| ScalarFma.split_pairs_tail(p, e, o));
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2,fma")]
            fn narrow(p: &[f32], e: &mut [f32], o: &mut [f32]) {
                Avx2Fma::new().split_pairs_tail(p, e, o)
            }
            #[target_feature(enable = "avx512f,fma")]
            fn wide(p: &[f32], e: &mut [f32], o: &mut [f32]) {
                Avx512Fma::new().split_pairs_tail(p, e, o)
            }
            // SAFETY (each call): the CPU has the level's features (`detected`).
            #[allow(unsafe_code)]
            if detected() >= Level::Avx2 {
                check(&|p, e, o| unsafe { narrow(p, e, o) });
            }
            #[allow(unsafe_code)]
            if detected() >= Level::Avx512 {
                check(&|p, e, o| unsafe { wide(p, e, o) });
            }
        }
    }

    /// Every vector level's `load_or_nan` reads the words inside the row and NaN elsewhere,
    /// from before the row's start to past its end, on rows shorter and longer than a vector.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn loads_or_nans_match_the_definition() {
        #[target_feature(enable = "avx2,fma")]
        fn avx2(row: &[f32], from: isize, out: &mut [f32; 16]) {
            Avx2Fma::new().load_or_nan(row, from, out);
        }
        #[target_feature(enable = "avx512f,fma")]
        fn avx512(row: &[f32], from: isize, out: &mut [f32; 16]) {
            Avx512Fma::new().load_or_nan(row, from, out);
        }
        let words: std::vec::Vec<f32> = (0..40).map(|i| i as f32 - 7.5).collect();
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 40] {
            let row = &words[..len];
            for from in -20..(len as isize + 20) {
                let want: [u32; 16] = core::array::from_fn(|j| {
                    usize::try_from(from + j as isize)
                        .ok()
                        .and_then(|i| row.get(i))
                        .map_or(f32::NAN.to_bits(), |v| v.to_bits())
                });
                for level in [Level::Avx2, Level::Avx512] {
                    if level > detected() {
                        continue;
                    }
                    let mut out = [0.5; 16];
                    // SAFETY: the level was detected on this CPU.
                    #[allow(unsafe_code)]
                    unsafe {
                        match level {
                            Level::Avx2 => avx2(row, from, &mut out),
                            _ => avx512(row, from, &mut out),
                        }
                    }
                    let got = out.map(f32::to_bits);
                    assert_eq!(got, want, "{level:?}: row of {len}, from {from}");
                }
            }
        }
    }

    #[test]
    fn the_level_is_cached_and_capped() {
        let first = detected();
        assert_eq!(detected(), first);
        limit(Level::Portable);
        assert_eq!(level(), Level::Portable);
        limit(Level::Avx512);
        assert_eq!(level(), first);
    }
}
