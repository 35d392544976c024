//! The matrix product behind Conv, Gemm and MatMul: `C = epilogue(A B)`, cache-blocked, with a
//! register-tiled micro-kernel the compiler vectorises.
//!
//! `B` is read as *panels*: 16 of its columns interleaved, one row of 16 floats per step of `k`;
//! `A` as the same panels of 16 rows, or as its own rows in place. A constant operand (a Conv's
//! weights, a MatMul's right matrix) is packed so at build time ([`crate::pack`]) and read in
//! place; a `B` computed at run time is packed into the node's scratch, `kc <= 256` steps at a
//! time: a row-major or transposed matrix, or a Conv's input seen through its window (im2col
//! one panel at a time, never the whole matrix). A row-major `A` needs no packing: the
//! micro-kernel broadcasts one element of `A` per row and step, from a panel or from `A`'s row
//! alike. The micro-kernel computes a tile of `H` rows by `W` columns (each dividing 16, so a
//! tile lies inside its panels; a tile of `A`'s rows read in place is 6 high at AVX2 and 14 at
//! AVX-512, as no panel of `A` has to hold it) with the tile's sums in registers: per step one
//! vector of `B`'s panel row, `H` broadcasts of `A`'s, `H` fused multiply-adds of `W` lanes
//! ([`crate::simd::MulAdd`], `vfmadd` at AVX2 and AVX-512). Each row's sums are a variable of
//! their own (`micro_fn!`), so the compiler keeps each in a vector register. At AVX-512, `A`'s
//! rows read in place times `B` packed at build time (a MatMul's weights) take wider tiles, 12
//! rows by two panels ([`wide_avx512`]), and a packed `A` times `B` read in place with a short
//! `k` (a pointwise Conv) tiles of 8 rows by two vectors ([`WIDE_POINTWISE_K`]).
//!
//! Every output element is `fma(a_k, b_k, ... fma(a_1, b_1, fma(a_0, b_0, 0)))` in increasing
//! `k` (each term's product and sum rounded once), one panel's partial sums stored in `C` and
//! picked up by the next: the same bits for any tile size, vector width or blocking (see
//! [`crate::simd`]). When an element's last panel is done, the epilogue adds the
//! bias (per row for Conv, `alpha` and `beta` for Gemm) and applies the fused activation to the
//! tile's stored rows (a chain activation, Sigmoid, SiLU or GELU, to the whole stored tile at
//! once: [`activate_tile`]).
//!
//! The packing buffers are the node's scratch ([`scratch_words`], planned in the arena); a tile
//! is at most 16 x 16 floats (1 KiB) of stack.

use crate::activation::Activation;
use crate::error::{KernelError, bail};
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2Fma, Avx512Fma};
use crate::simd::{MulAdd, ScalarFma, dispatch};

/// The width of a packed panel: 16 rows of `A` or 16 columns of `B` per row of `k`. Every
/// micro-kernel's tile (`R` rows, `NR` columns, at most 16 each, dividing 16) is a part of one.
pub const PANEL: usize = 16;
/// The most rows of `k` in a panel: 256 x 16 floats is 16 KiB, well inside an L1 cache.
pub(crate) const KC_MAX: usize = 256;
/// The longest `k` for which a packed `A` times `B` read in place (a pointwise Conv, the
/// padded-rows method) takes wide tiles ([`drive`]'s `WH x WW`) at AVX-512: 8 rows of the panel
/// by 32 columns, two vectors of `B` a step for 8 broadcasts of `A`, where the full tile of 16 x
/// 16 takes 16 broadcasts for one vector. Whole networks side by side, two runs, the same
/// bits: dwcnn_96 1.04 and 1.13x, mobilenet_v2 1.03 and 0.98x, squeezenet1_1 1.03x,
/// mobilenet_v3_small 1.04x, convnext_like_28 1.33x, the keyword spotter 1.01x. Alone, the
/// Convs' own ratios moved with the build's code layout (0.73 to 1.3x for the same code); a
/// longer `k` in blocks of 128 ran 0.84x on 512 -> 1000 at 16 x 16. The padded-rows method's
/// `B` (`B::Offsets`, a 3x3 Conv's rows) takes the wide tiles at any `k`: alone, the same bits,
/// 16 -> 16, 16 -> 32, 32 -> 32, 40 -> 40, 48 -> 48 and 32 -> 64 at 32 x 32 and 64 x 64
/// 1.04-1.12x, 16 x 16 rows (one vector) unchanged.
const WIDE_POINTWISE_K: usize = 128;

/// The longest `k` for which a pointwise product whose rows end in half a panel (`m % 16 == 8`:
/// 24, 40, 56, 72 output channels) takes the wide tiles all the same: its full tiles leave a
/// last tile of 8 rows by one vector, 8 broadcasts for 16 columns, where a wide one takes 8 for
/// 32. Alone at AVX-512, the same bits: 144 -> 24 at 56 x 56 1.0-1.36x (noisy) and at 28 x 28
/// 1.2x, 200 -> 24 1.25x, 184 -> 56 1.08x, 256 -> 72 1.07x, 240 -> 40 1.0-1.02x. (Every `m` up
/// to this `k` was mixed: 192 -> 32 0.87x, 256 -> 128 0.94x.)
const WIDE_HALF_PANEL_K: usize = 256;

/// One row of a packed panel.
pub(crate) type Row = [f32; PANEL];

/// Scratch words (`u64`) for a product with inner dimension `k` that packs `B` at run time
/// (`pack_b`): a panel of `min(k, 256)` rows (`A` is never packed at run time: its rows are
/// read in place).
pub(crate) fn scratch_words(k: usize, pack_b: bool) -> usize {
    (k.clamp(1, KC_MAX) * PANEL * usize::from(pack_b)).div_ceil(2)
}

/// Scratch words as the rows of packed panels.
pub(crate) fn panel_buffer(scratch: &mut [u64]) -> &mut [Row] {
    let floats: &mut [f32] = bytemuck::cast_slice_mut(scratch);
    floats.as_chunks_mut::<PANEL>().0
}

/// Writes `B` a panel at a time.
pub(crate) trait Panel {
    /// Writes rows `k0..k0 + dst.len()`, columns `n0..n0 + w` of `B` to columns `0..w` of
    /// `dst`'s rows, zeros in columns `w..nr` (`w <= nr <= 16`). The caller keeps every index
    /// inside `B`.
    fn pack(&self, k0: usize, n0: usize, w: usize, nr: usize, dst: &mut [Row]);
}

/// `B` row-major: `B[k][j] = b[k * ld + j]`.
pub(crate) struct RowMajor<'a> {
    pub(crate) b: &'a [f32],
    pub(crate) ld: usize,
}

impl Panel for RowMajor<'_> {
    fn pack(&self, k0: usize, n0: usize, w: usize, nr: usize, dst: &mut [Row]) {
        for (p, row) in dst.iter_mut().enumerate() {
            let src = &self.b[(k0 + p) * self.ld + n0..][..w];
            // A whole panel row as one fixed-size copy (a vector move, not a call to memcpy).
            match src.first_chunk::<PANEL>() {
                Some(full) => *row = *full,
                None => {
                    row[..w].copy_from_slice(src);
                    row[w..nr].fill(0.0);
                }
            }
        }
    }
}

/// `B` stored transposed: `B[k][j] = b[j * ld + k]` (Gemm's `transB`).
pub(crate) struct Transposed<'a> {
    pub(crate) b: &'a [f32],
    pub(crate) ld: usize,
}

impl Panel for Transposed<'_> {
    fn pack(&self, k0: usize, n0: usize, w: usize, nr: usize, dst: &mut [Row]) {
        let kc = dst.len();
        for row in dst.iter_mut() {
            row[w..nr].fill(0.0);
        }
        for j in 0..w {
            let src = &self.b[(n0 + j) * self.ld + k0..][..kc];
            for (row, &v) in dst.iter_mut().zip(src) {
                row[j] = v;
            }
        }
    }
}

/// Where `A` (`m x k`) is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum A<'a> {
    /// Row-major with row stride `lda`: each tile reads its rows in place.
    Rows { a: &'a [f32], lda: usize },
    /// Packed at build time ([`crate::pack`]): `ceil(m / 16)` panels of `k` rows of 16, the
    /// rows past `m` zero.
    Packed(&'a [Row]),
}

/// Where `B` (`k x n`) is.
pub(crate) enum B<'a, P> {
    /// Packed a panel at a time at run time by `P`.
    Pack(&'a P),
    /// Packed at build time ([`crate::pack`]): `ceil(n / 16)` panels of `k` rows of 16, the
    /// columns past `n` zero.
    Packed(&'a [Row]),
    /// Row-major with row stride `ld`, read in place (a pointwise Conv's input): no scratch, and
    /// with `A` packed each tile of rows sums its whole `k` in registers, then walks along its
    /// rows of `C` (a few write streams the hardware prefetches, not one per row of `C`).
    /// Needs `A::Packed`; with `A::Rows` it is packed at run time like `Pack(RowMajor)`.
    InPlace { b: &'a [f32], ld: usize },
    /// Read in place, row `k` of `B` at `b[offsets[k]..]` (a Conv's input rows copied with their
    /// padding, each tap's row at its own offset: [`crate::conv`]'s padded-rows method). Needs
    /// `A::Packed`, as `InPlace` does.
    Offsets { b: &'a [f32], offsets: &'a [u32] },
}

/// What is added to a finished element before the activation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bias<'a> {
    /// Nothing.
    None,
    /// `bias[i]` on row `i` (a Conv's bias).
    Row(&'a [f32]),
    /// `bias[j]` on column `j` (a MatMul's bias: the `Add` of a constant fused into it).
    Col(&'a [f32]),
    /// Gemm: `alpha * sum + beta * c[i * rs + j * cs]` (or `alpha * sum` without `c`).
    Gemm {
        alpha: f32,
        beta: f32,
        c: Option<(&'a [f32], usize, usize)>,
    },
}

/// One product `C = act(bias(A B))` into `C` (`m x n`, row stride `ldc`).
pub(crate) struct Product<'c, 'a> {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) c: &'c mut [f32],
    pub(crate) ldc: usize,
    pub(crate) bias: Bias<'a>,
    pub(crate) act: Activation,
}

impl Product<'_, '_> {
    /// The epilogue on sums already in `c` (every row).
    pub(crate) fn finish_all(&mut self) {
        for i in 0..self.m {
            let row = &mut self.c[i * self.ldc..][..self.n];
            finish(self.bias, self.act, i, 0, row);
        }
    }
}

/// The epilogue of row `i`, columns `j0..j0 + row.len()`, on the finished sums in `row`.
#[inline(always)]
fn finish(bias: Bias<'_>, act: Activation, i: usize, j0: usize, row: &mut [f32]) {
    add_bias(bias, i, j0, row);
    act.apply(row);
}

/// The bias of row `i`, columns `j0..j0 + row.len()`, added to the finished sums in `row`.
#[inline(always)]
fn add_bias(bias: Bias<'_>, i: usize, j0: usize, row: &mut [f32]) {
    match bias {
        Bias::None => {}
        Bias::Row(bias) => {
            let b = bias[i];
            row.iter_mut().for_each(|x| *x += b);
        }
        Bias::Col(bias) => {
            for (x, &b) in row.iter_mut().zip(&bias[j0..]) {
                *x += b;
            }
        }
        Bias::Gemm { alpha, beta, c } => match c {
            None => row.iter_mut().for_each(|x| *x *= alpha),
            Some((c, rs, cs)) => {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = alpha * *x + beta * c[i * rs + (j0 + j) * cs];
                }
            }
        },
    }
}

/// Computes `p` from `a` and `b`, packing into `buf` (the node's scratch: a panel of `B` when `b`
/// is packed at run time).
///
/// # Errors
/// Operands too short for the shapes, or a buffer too small for one row of the panel.
pub(crate) fn product<P: Panel>(
    p: &mut Product<'_, '_>,
    a: A<'_>,
    b: B<'_, P>,
    buf: &mut [Row],
) -> Result<(), KernelError> {
    let (m, n, k) = (p.m, p.n, p.k);
    if m == 0 || n == 0 {
        return Ok(());
    }
    let fits = |len: usize, rows: usize, ld: usize, cols: usize| {
        (rows - 1)
            .checked_mul(ld)
            .and_then(|x| x.checked_add(cols))
            .is_some_and(|need| need <= len)
    };
    let packed = |len: usize, rows: usize| {
        rows.div_ceil(PANEL)
            .checked_mul(k)
            .is_some_and(|need| need <= len)
    };
    let a_fits = match a {
        A::Rows { a, lda } => k == 0 || fits(a.len(), m, lda, k),
        A::Packed(a) => packed(a.len(), m),
    };
    let b_fits = match b {
        B::Pack(_) => true,
        B::Packed(b) => packed(b.len(), n),
        B::InPlace { b, ld } => fits(b.len(), k.max(1), ld, n),
        B::Offsets { b, offsets } => {
            matches!(a, A::Packed(_))
                && offsets.len() >= k
                && offsets[..k].iter().all(|&o| {
                    (o as usize)
                        .checked_add(n)
                        .is_some_and(|end| end <= b.len())
                })
        }
    };
    if !fits(p.c.len(), m, p.ldc, n) || !a_fits || !b_fits {
        bail!("internal error: a matrix product's operands are shorter than its shape");
    }
    if let Bias::Row(bias) = p.bias
        && bias.len() < m
    {
        bail!("internal error: the bias is shorter than the rows");
    }
    if let Bias::Col(bias) = p.bias
        && bias.len() < n
    {
        bail!("internal error: the bias is shorter than the columns");
    }
    if k == 0 {
        for i in 0..m {
            p.c[i * p.ldc..][..n].fill(0.0);
        }
        p.finish_all();
        return Ok(());
    }
    if let (A::Rows { .. }, B::InPlace { b, ld }) = (a, &b) {
        let rm = RowMajor { b, ld: *ld };
        return product(p, a, B::Pack(&rm), buf);
    }
    let panels = usize::from(matches!(b, B::Pack(_)));
    if buf.len() < panels {
        bail!(
            "the scratch holds {} panel rows, the product needs at least {panels}",
            buf.len()
        );
    }
    dispatch!(
        drive_portable::<P>,
        drive_avx2::<P>,
        drive_avx512::<P>,
        (p, a, b, buf)
    );
    Ok(())
}

/// The portable build's tiles.
#[cfg(target_arch = "arm")]
fn drive_portable<P: Panel>(p: &mut Product<'_, '_>, a: A<'_>, b: B<'_, P>, buf: &mut [Row]) {
    // 4 x 4 sums in 16 of the Cortex-M4F's 32 single-precision registers, 4 + 4 operands.
    drive::<P, _, 4, 4, 1, 4, 4, 1, 0, 0>(ScalarFma, p, a, b, buf);
}

/// The portable build's tiles.
#[cfg(not(target_arch = "arm"))]
fn drive_portable<P: Panel>(p: &mut Product<'_, '_>, a: A<'_>, b: B<'_, P>, buf: &mut [Row]) {
    // SSE2: 4 rows x 8 columns (2 xmm registers), 8 of the 16 registers.
    drive::<P, _, 4, 2, 1, 8, 4, 1, 0, 0>(ScalarFma, p, a, b, buf);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn drive_avx2<P: Panel>(p: &mut Product<'_, '_>, a: A<'_>, b: B<'_, P>, buf: &mut [Row]) {
    let fma = Avx2Fma::new();
    if let Some((row, panels)) = one_row(p, &a, &b) {
        // 4 panels: 8 of the 16 ymm registers hold sums.
        return row_times_panels::<_, 4>(fma, p, row, panels);
    }
    match a {
        // 6 rows x 16 columns: 12 of the 16 ymm registers hold sums, enough independent
        // multiply-adds to cover the latency of both FMA units. `A`'s rows are read in place,
        // so a tile of 6 needs no panel of 16 to lie in.
        A::Rows { .. } => drive::<P, _, 6, 4, 2, 16, 8, 4, 0, 0>(fma, p, a, b, buf),
        // 4 rows x 16 columns (2 ymm registers), 8 of the 16 registers: a tile inside a packed
        // panel of 16 rows.
        A::Packed(_) => drive::<P, _, 4, 2, 1, 16, 8, 4, 0, 0>(fma, p, a, b, buf),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn drive_avx512<P: Panel>(p: &mut Product<'_, '_>, a: A<'_>, b: B<'_, P>, buf: &mut [Row]) {
    let fma = Avx512Fma::new();
    if let Some((row, panels)) = one_row(p, &a, &b) {
        // 8 panels: 8 zmm registers of sums, as many chains as two FMA units of 4 cycles keep
        // busy.
        return row_times_panels::<_, 8>(fma, p, row, panels);
    }
    match (a, &b) {
        // Rows of `A` in place times `B` packed at build time: 12 rows x 32 columns.
        (A::Rows { a: rows, lda }, B::Packed(panels)) if p.m >= WIDE_ROWS && p.n > PANEL => {
            wide_avx512(fma, p, rows, lda, panels);
        }
        // 14 rows x 16 columns: 14 of the 32 zmm registers hold sums. `A`'s rows are read in
        // place, each step one element from each row: 14 row addresses fit the 16 general
        // registers with the loop's own, where 16 of them (the packed tile's height) spill
        // (side by side: a 128 x 1024 x 256 MatMul 64.5 -> 69.3 GMAC/s, shorter `k` unchanged).
        (A::Rows { .. }, _) => drive::<P, _, 14, 8, 4, 16, 8, 4, 0, 0>(fma, p, a, b, buf),
        // 16 rows x 16 columns (a zmm register), 16 of the 32 registers.
        (A::Packed(_), _) => drive::<P, _, 16, 8, 4, 16, 8, 4, 8, 32>(fma, p, a, b, buf),
    }
}

/// The height of [`wide_avx512`]'s tiles: 12 rows by 32 columns are 24 of the 32 zmm registers
/// of sums, as many independent multiply-adds as two FMA units of 4 cycles need, three times.
#[cfg(target_arch = "x86_64")]
const WIDE_ROWS: usize = 12;
/// The steps of `k` in each block of [`wide_avx512`]: a tile's 12 rows of 256 steps are 12 KiB,
/// which stay in the L1 cache while the tile meets every pair of panels.
#[cfg(target_arch = "x86_64")]
const WIDE_KC: usize = 256;

/// `A`'s rows read in place times `B` packed at build time (a MatMul's or a Gemm's constant
/// weights), at AVX-512: tiles of [`WIDE_ROWS`] rows by two panels of `B` (32 columns), per step
/// two vectors of `B` and 12 broadcasts for 24 fused multiply-adds, where the general tile of
/// 14 x 16 takes 15 loads for 14 and spills 4 of its 14 row addresses (side by side, alone:
/// 1.2-1.45x on MatMuls of 50 to 197 rows, `k` and `n` from 64 to 1024). Each tile of rows
/// meets every pair of panels, [`WIDE_KC`] steps at a time. The last tiles of rows and columns
/// are partial: the last tile of rows is 4, 8 or 12 high, its rows past `A`'s repeat its last
/// row; the columns past `B`'s read the packed zeros (or the last panel again); neither is
/// stored. Each element's sums are the general tile's, in increasing `k`: the same bits.
///
/// Taken for a whole tile of rows at least and more than one panel of columns (fewer leave most
/// of a tile idle). A `B` packed at run time keeps the general tiles: packed two panels at a
/// time (128 steps each in the scratch of one panel of 256), attention's products ran
/// 0.73-0.87x (128 x 64 x 128, 128 x 128 x 64).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn wide_avx512(fma: Avx512Fma, p: &mut Product<'_, '_>, a: &[f32], lda: usize, panels: &[Row]) {
    let (m, n, k) = (p.m, p.n, p.k);
    // `A`'s rows of a tile from `m0`, the steps `k0..k0 + kc` (the last row repeated).
    let rows = |m0: usize, k0: usize, kc: usize| -> [&[f32]; WIDE_ROWS] {
        core::array::from_fn(|i| &a[(m0 + i).min(m - 1) * lda + k0..][..kc])
    };
    let step = |n0: usize, k0: usize, kc: usize| Step {
        n0,
        w: (n - n0).min(2 * PANEL),
        first: k0 == 0,
        last: k0 + kc == k,
    };
    let count = n.div_ceil(PANEL);
    let mut k0 = 0;
    while k0 < k {
        let kc = WIDE_KC.min(k - k0);
        let mut m0 = 0;
        while m0 < m {
            let rows = rows(m0, k0, kc);
            let mut n0 = 0;
            while n0 < n {
                let panel = |i: usize| &panels[i.min(count - 1) * k + k0..][..kc];
                let pair = [panel(n0 / PANEL), panel(n0 / PANEL + 1)];
                let step = step(n0, k0, kc);
                match m - m0 {
                    1..=4 => wide_tile_avx512::<4>(fma, p, &rows, pair, m0, &step),
                    5..=8 => wide_tile_avx512::<8>(fma, p, &rows, pair, m0, &step),
                    _ => wide_tile_avx512::<WIDE_ROWS>(fma, p, &rows, pair, m0, &step),
                }
                n0 += 2 * PANEL;
            }
            m0 += WIDE_ROWS;
        }
        k0 += kc;
    }
}

/// `H` of the [`WIDE_ROWS`] rows of `A` (`rows`, the steps of this block of `k`) by two panels
/// of `B`, the tile's rows of `C` from `m0` (those inside `C`) and its `step.w` columns from
/// `step.n0`. The last tile of rows takes the least of 4, 8 and 12 rows that holds them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
#[inline(never)]
fn wide_tile_avx512<const H: usize>(
    fma: Avx512Fma,
    p: &mut Product<'_, '_>,
    rows: &[&[f32]; WIDE_ROWS],
    panels: [&[Row]; 2],
    m0: usize,
    step: &Step,
) {
    let (ldc, n0, w) = (p.ldc, step.n0, step.w);
    let inside = (p.m - m0).min(H);
    let (wl, wr) = (w.min(PANEL), w.saturating_sub(PANEL));
    let mut sums = [[[0.0f32; PANEL]; 2]; H];
    if !step.first {
        for (i, [left, right]) in sums.iter_mut().enumerate().take(inside) {
            let from = &p.c[(m0 + i) * ldc + n0..][..w];
            left[..wl].copy_from_slice(&from[..wl]);
            right[..wr].copy_from_slice(&from[wl..]);
        }
    }
    match H {
        12 => wide12(fma, &mut sums, rows, panels),
        8 => wide8(fma, &mut sums, rows, panels),
        _ => wide4(fma, &mut sums, rows, panels),
    }
    for (i, [left, right]) in sums.iter_mut().enumerate().take(inside) {
        store_row(p, m0 + i, n0, wl, left, step.last);
        if wr > 0 {
            store_row(p, m0 + i, n0 + PANEL, wr, right, step.last);
        }
    }
    activate_tile(p, m0, inside, n0, w, step.last);
}

/// The wide micro-kernel: `sums[i][h][j] = fma(a[i][p], panels[h][p][j], sums[i][h][j])` for
/// every step `p` in order, each row's two vectors of sums variables of their own (so that each
/// is a register).
macro_rules! wide_fn {
    ($name:ident, $h:literal, [$($l:ident $r:ident $x:ident $i:literal),+]) => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        fn $name<F: MulAdd>(
            fma: F,
            sums: &mut [[[f32; PANEL]; 2]],
            a: &[&[f32]],
            [left, right]: [&[Row]; 2],
        ) {
            let (Ok(sums), Some(a)) = (
                <&mut [[[f32; PANEL]; 2]; $h]>::try_from(sums),
                a.first_chunk::<$h>(),
            ) else {
                return;
            };
            let [$([mut $l, mut $r]),+] = *sums;
            let kc = left.len().min(right.len()).min(a[0].len());
            let (left, right) = (&left[..kc], &right[..kc]);
            $(let $x = &a[$i][..kc];)+
            for p in 0..kc {
                let (bl, br) = (&left[p], &right[p]);
                $(
                    let v = $x[p];
                    fma.mul_add(&mut $l, v, bl);
                    fma.mul_add(&mut $r, v, br);
                )+
            }
            *sums = [$([$l, $r]),+];
        }
    };
}
wide_fn!(wide4, 4, [l0 r0 x0 0, l1 r1 x1 1, l2 r2 x2 2, l3 r3 x3 3]);
wide_fn!(wide8, 8, [l0 r0 x0 0, l1 r1 x1 1, l2 r2 x2 2, l3 r3 x3 3, l4 r4 x4 4, l5 r5 x5 5, l6 r6 x6 6, l7 r7 x7 7]);
wide_fn!(wide12, 12, [l0 r0 x0 0, l1 r1 x1 1, l2 r2 x2 2, l3 r3 x3 3, l4 r4 x4 4, l5 r5 x5 5, l6 r6 x6 6, l7 r7 x7 7, l8 r8 x8 8, l9 r9 x9 9, l10 r10 x10 10, l11 r11 x11 11]);

/// A single row of `A` read in place times `B` packed at build time (a classifier's Gemm or
/// MatMul on one input): the row and the panels, for [`row_times_panels`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn one_row<'x, P>(p: &Product<'_, '_>, a: &A<'x>, b: &B<'x, P>) -> Option<(&'x [f32], &'x [Row])> {
    match (a, b) {
        (A::Rows { a, .. }, B::Packed(panels)) if p.m == 1 => Some((a.get(..p.k)?, panels)),
        _ => None,
    }
}

/// `C = act(bias(a B))` for one row `a` (`k`) and `B` packed at build time, `G` panels at a
/// time: per step of `k` one element of `a` broadcast, one row of each of the `G` panels, `G`
/// fused multiply-adds, so `G` chains of sums overlap and `G` streams of `B` are read at once
/// (the general tiles take one panel of `B` at a time, a chain that waits on each multiply-add
/// and on one stream). Each element is still `fma(a_k, b_k, ... fma(a_0, b_0, 0))` in increasing
/// `k`: the general tiles' bits.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn row_times_panels<F: MulAdd, const G: usize>(
    fma: F,
    p: &mut Product<'_, '_>,
    a: &[f32],
    panels: &[Row],
) {
    let (n, k) = (p.n, p.k);
    let count = n.div_ceil(PANEL);
    let mut j = 0;
    while j < count {
        let group = G.min(count - j);
        let mut sums = [[0.0f32; PANEL]; G];
        if group == G {
            let cols: [&[Row]; G] = core::array::from_fn(|g| &panels[(j + g) * k..][..k]);
            for (i, &av) in a.iter().enumerate() {
                for (s, col) in sums.iter_mut().zip(&cols) {
                    fma.mul_add(s, av, &col[i]);
                }
            }
        } else {
            for (g, s) in sums.iter_mut().enumerate().take(group) {
                for (&av, row) in a.iter().zip(&panels[(j + g) * k..][..k]) {
                    fma.mul_add(s, av, row);
                }
            }
        }
        for (g, s) in sums.iter_mut().enumerate().take(group) {
            let n0 = (j + g) * PANEL;
            store_row(p, 0, n0, PANEL.min(n - n0), s, true);
        }
        let n0 = j * PANEL;
        activate_tile(p, 0, 1, n0, (group * PANEL).min(n - n0), true);
        j += group;
    }
}

/// The largest of `X >= XH >= XQ >= 1` that is at most `count` (`count >= 1`).
#[inline(always)]
fn pick_below<const X: usize, const XH: usize, const XQ: usize>(count: usize) -> usize {
    if count >= X {
        X
    } else if count >= XH {
        XH
    } else if count >= XQ {
        XQ
    } else {
        1
    }
}

/// The smallest of `X >= XH >= XQ >= 1` that is at least `count`.
#[inline(always)]
fn pick<const X: usize, const XH: usize, const XQ: usize>(count: usize) -> usize {
    if count <= 1 {
        1
    } else if count <= XQ {
        XQ
    } else if count <= XH {
        XH
    } else {
        X
    }
}

/// `A`'s tile at `m0` for `k0..k0 + kc`: a part of a packed panel, or `A`'s own rows, read in
/// place (the micro-kernel broadcasts each element from memory either way, so a row-major `A`
/// needs no packing).
#[inline(always)]
fn a_tile<'x>(a: &A<'x>, k: usize, m0: usize, k0: usize, kc: usize) -> ATile<'x> {
    match *a {
        A::Packed(panels) => ATile::Panel {
            rows: &panels[(m0 / PANEL) * k + k0..][..kc],
            r0: m0 % PANEL,
        },
        A::Rows { a, lda } => ATile::Rows { a, lda, k0, kc },
    }
}

/// The blocked loops. With `B` packed at run time, each panel of `B` (`NR` columns, `kc` rows)
/// meets every tile of rows; with `B` packed at build time, each tile of rows meets every panel.
/// Tiles are `R` rows by `NR` columns; the last rows and columns take the smallest of the
/// heights `R, RH, RQ, 1` and widths `NR, NH, NQ, 1` that covers them (each divides 16, so a
/// tile stays inside its panels; a height that does not, AVX2's 6, only with `A::Rows`). A
/// packed `A` times `B` read in place with a `k` of at most [`WIDE_POINTWISE_K`] takes tiles of
/// `WH x WW` first where they fit (`WW = 0`: never).
#[inline(always)]
fn drive<
    P: Panel,
    F: OutOfLineTile,
    const R: usize,
    const RH: usize,
    const RQ: usize,
    const NR: usize,
    const NH: usize,
    const NQ: usize,
    const WH: usize,
    const WW: usize,
>(
    fma: F,
    p: &mut Product<'_, '_>,
    a: A<'_>,
    b: B<'_, P>,
    buf: &mut [Row],
) {
    let (m, n, k) = (p.m, p.n, p.k);
    let pack_b = matches!(b, B::Pack(_));
    let kc_max = if pack_b { buf.len() } else { KC_MAX }
        .clamp(1, KC_MAX)
        .min(k);
    let b_buf = &mut buf[..if pack_b { kc_max } else { 0 }];
    let tiles = |m0: usize| {
        let rows = (m - m0).min(R);
        (rows, pick::<R, RH, RQ>(rows))
    };
    match b {
        B::Pack(packer) => {
            let mut n0 = 0;
            while n0 < n {
                let w = NR.min(n - n0);
                let width = pick::<NR, NH, NQ>(w);
                let mut k0 = 0;
                while k0 < k {
                    let kc = kc_max.min(k - k0);
                    let panel = &mut b_buf[..kc];
                    packer.pack(k0, n0, w, width, panel);
                    let step = Step {
                        n0,
                        w,
                        first: k0 == 0,
                        last: k0 + kc == k,
                    };
                    let mut m0 = 0;
                    while m0 < m {
                        let (rows, height) = tiles(m0);
                        let t = Tile {
                            a: a_tile(&a, k, m0, k0, kc),
                            b: Operand::Panel(panel),
                            c0: 0,
                            m0,
                            rows,
                        };
                        match t.a {
                            ATile::Panel { .. } => tile_of::<F, true, R, RH, RQ, NR, NH, NQ>(
                                fma, p, &t, &step, height, width,
                            ),
                            ATile::Rows { .. } => tile_of::<F, false, R, RH, RQ, NR, NH, NQ>(
                                fma, p, &t, &step, height, width,
                            ),
                        }
                        m0 += height;
                    }
                    k0 += kc;
                }
                n0 += NR;
            }
        }
        B::InPlace { .. } | B::Offsets { .. } => {
            // `A` is packed (`product` sends `A::Rows` through `Pack`): every tile of rows
            // takes the whole `k` at once, then the next columns of the same rows.
            let A::Packed(panels) = a else { return };
            let offsets = matches!(b, B::Offsets { .. });
            let operand = |n0: usize| match b {
                B::InPlace { b, ld } => Some(Operand::InPlace { b: &b[n0..], ld }),
                B::Offsets { b, offsets } => Some(Operand::Offsets {
                    b: &b[n0..],
                    offsets: &offsets[..k],
                }),
                B::Pack(_) | B::Packed(_) => None,
            };
            let mut m0 = 0;
            while m0 < m {
                let (rows, height) = tiles(m0);
                let at = &panels[(m0 / PANEL) * k..][..k];
                let mut n0 = 0;
                // A short `k` takes wide tiles first: `WH` rows of the panel by `WW` columns,
                // two vectors of `B` a step for `WH` broadcasts of `A`.
                while WW > 0
                    && (offsets
                        || k <= WIDE_POINTWISE_K
                        || (k <= WIDE_HALF_PANEL_K && m % PANEL == PANEL / 2))
                    && height >= WH
                    && n - n0 >= WW
                {
                    let Some(operand) = operand(n0) else {
                        return;
                    };
                    let step = Step {
                        n0,
                        w: WW,
                        first: true,
                        last: true,
                    };
                    let mut r = 0;
                    while r < rows {
                        let t = Tile {
                            a: ATile::Panel {
                                rows: at,
                                r0: m0 % PANEL + r,
                            },
                            b: operand,
                            c0: 0,
                            m0: m0 + r,
                            rows: (rows - r).min(WH),
                        };
                        tile::<F, WH, WW>(fma, p, &t, &step);
                        r += WH;
                    }
                    n0 += WW;
                }
                while n0 < n {
                    // Widths round down here: a tile never reads past the end of `b`.
                    let width = pick_below::<NR, NH, NQ>(n - n0);
                    let step = Step {
                        n0,
                        w: width,
                        first: true,
                        last: true,
                    };
                    let Some(operand) = operand(n0) else {
                        return;
                    };
                    let t = Tile {
                        a: ATile::Panel {
                            rows: at,
                            r0: m0 % PANEL,
                        },
                        b: operand,
                        c0: 0,
                        m0,
                        rows,
                    };
                    tile_of::<F, true, R, RH, RQ, NR, NH, NQ>(fma, p, &t, &step, height, width);
                    n0 += width;
                }
                m0 += height;
            }
        }
        B::Packed(b_panels) => {
            let mut m0 = 0;
            while m0 < m {
                let (rows, height) = tiles(m0);
                let mut k0 = 0;
                while k0 < k {
                    let kc = kc_max.min(k - k0);
                    let at = a_tile(&a, k, m0, k0, kc);
                    let mut n0 = 0;
                    while n0 < n {
                        let w = NR.min(n - n0);
                        let step = Step {
                            n0,
                            w,
                            first: k0 == 0,
                            last: k0 + kc == k,
                        };
                        let t = Tile {
                            a: at,
                            b: Operand::Panel(&b_panels[(n0 / PANEL) * k + k0..][..kc]),
                            c0: n0 % PANEL,
                            m0,
                            rows,
                        };
                        let width = pick::<NR, NH, NQ>(w);
                        tile_of::<F, false, R, RH, RQ, NR, NH, NQ>(
                            fma, p, &t, &step, height, width,
                        );
                        n0 += NR;
                    }
                    k0 += kc;
                }
                m0 += height;
            }
        }
    }
}

/// The tile of `height` rows and `width` columns (each one of the tile sizes), called
/// ([`OutOfLineTile`]); the full tile inlined into the driver when `INLINE`.
///
/// The sweeps of a packed `A` (a Conv's weights) inline: along a row of `B` read in place (a
/// pointwise Conv, whose tiles take the whole `k` at once, often 32 to 96 steps: the call cost
/// it 6-11% side by side, 32 -> 16 channels at 112 x 112, 96 -> 24 at 56 x 56) and down a panel
/// of `B` packed at run time. With `A`'s rows read in place (MatMul) the full tile ran 2-8%
/// slower inlined than called (the driver's state and the tile's 14 row addresses share the
/// general registers), and a panel of `B` packed at build time meets it the same way.
#[inline(always)]
fn tile_of<
    F: OutOfLineTile,
    const INLINE: bool,
    const R: usize,
    const RH: usize,
    const RQ: usize,
    const NR: usize,
    const NH: usize,
    const NQ: usize,
>(
    fma: F,
    p: &mut Product<'_, '_>,
    t: &Tile<'_>,
    step: &Step,
    height: usize,
    width: usize,
) {
    if INLINE && height == R && width == NR {
        tile::<F, R, NR>(fma, p, t, step);
    } else if height == R {
        columns::<F, R, NR, NH, NQ>(fma, p, t, step, width);
    } else if height == RH {
        columns::<F, RH, NR, NH, NQ>(fma, p, t, step, width);
    } else if height == RQ {
        columns::<F, RQ, NR, NH, NQ>(fma, p, t, step, width);
    } else {
        columns::<F, 1, NR, NH, NQ>(fma, p, t, step, width);
    }
}

#[inline(always)]
fn columns<F: OutOfLineTile, const H: usize, const NR: usize, const NH: usize, const NQ: usize>(
    fma: F,
    p: &mut Product<'_, '_>,
    t: &Tile<'_>,
    step: &Step,
    width: usize,
) {
    if width == NR {
        fma.tile::<H, NR>(p, t, step);
    } else if width == NH {
        fma.tile::<H, NH>(p, t, step);
    } else if width == NQ {
        fma.tile::<H, NQ>(p, t, step);
    } else {
        fma.tile::<H, 1>(p, t, step);
    }
}

/// A level's [`tile`] of `H x W`, compiled once per size as a function of its own (with the
/// level's target features) that the drivers call ([`tile_of`] says where a full tile is
/// inlined instead). Every tile size inlined into its driver was copied for each of the three
/// operands and the three packers: 4.8 MB of machine code in three functions, one compiler
/// thread for ten minutes of the crate's release build, and 1.4 MiB of stack frame in a debug
/// build (now 2.6 MB for the whole crate, 40 s, 126 KiB).
trait OutOfLineTile: MulAdd {
    /// [`tile`] at this level, `H` rows by `W` columns.
    fn tile<const H: usize, const W: usize>(
        self,
        p: &mut Product<'_, '_>,
        t: &Tile<'_>,
        step: &Step,
    );
}

impl OutOfLineTile for ScalarFma {
    #[inline(always)]
    fn tile<const H: usize, const W: usize>(
        self,
        p: &mut Product<'_, '_>,
        t: &Tile<'_>,
        step: &Step,
    ) {
        tile_portable::<H, W>(self, p, t, step);
    }
}

#[inline(never)]
fn tile_portable<const H: usize, const W: usize>(
    fma: ScalarFma,
    p: &mut Product<'_, '_>,
    t: &Tile<'_>,
    step: &Step,
) {
    tile::<ScalarFma, H, W>(fma, p, t, step);
}

/// [`OutOfLineTile`] for a level's token `$token`: `$name`, [`tile`] compiled with the level's
/// `$features`.
#[cfg(target_arch = "x86_64")]
macro_rules! out_of_line_tile {
    ($token:ident, $name:ident, $features:literal) => {
        impl OutOfLineTile for $token {
            #[inline(always)]
            #[allow(unsafe_code)]
            fn tile<const H: usize, const W: usize>(
                self,
                p: &mut Product<'_, '_>,
                t: &Tile<'_>,
                step: &Step,
            ) {
                // SAFETY: a value of the token exists only where its features are enabled (its
                // constructor is a `target_feature` function of those features).
                unsafe { $name::<H, W>(self, p, t, step) }
            }
        }

        #[target_feature(enable = $features)]
        #[inline(never)]
        fn $name<const H: usize, const W: usize>(
            fma: $token,
            p: &mut Product<'_, '_>,
            t: &Tile<'_>,
            step: &Step,
        ) {
            tile::<$token, H, W>(fma, p, t, step);
        }
    };
}
#[cfg(target_arch = "x86_64")]
out_of_line_tile!(Avx2Fma, tile_avx2, "avx2,fma");
#[cfg(target_arch = "x86_64")]
out_of_line_tile!(Avx512Fma, tile_avx512, "avx512f,fma");

/// Where a tile's columns are: the first, how many are inside `C`, and whether this panel of
/// `k` is the first and the last of its columns.
struct Step {
    n0: usize,
    w: usize,
    first: bool,
    last: bool,
}

/// A tile's operands: the rows of its `A` panel (its rows from column `r0`) and of its `B`
/// operand (its columns from column `c0`), and its rows of `C` (`m0..m0 + rows`).
struct Tile<'x> {
    a: ATile<'x>,
    b: Operand<'x>,
    c0: usize,
    m0: usize,
    rows: usize,
}

/// Where a tile reads `A`: the rows of a packed panel (its rows from column `r0`), or `A`'s own
/// rows (row `i` of the tile at `a[(m0 + i) * lda + k0..][..kc]`).
#[derive(Clone, Copy)]
enum ATile<'x> {
    Panel {
        rows: &'x [Row],
        r0: usize,
    },
    Rows {
        a: &'x [f32],
        lda: usize,
        k0: usize,
        kc: usize,
    },
}

/// Where a tile reads `B`: the rows of a panel, or row-major rows read in place (column 0 of
/// the tile at `b[0]`, row `p` at `b[p * ld]`; every row has the tile's `W` columns).
#[derive(Clone, Copy)]
enum Operand<'x> {
    Panel(&'x [Row]),
    InPlace { b: &'x [f32], ld: usize },
    Offsets { b: &'x [f32], offsets: &'x [u32] },
}

/// `H` rows by `W` columns of `C` (`rows <= H` and `step.w <= W` of them inside `C`).
#[inline(always)]
fn tile<F: MulAdd, const H: usize, const W: usize>(
    fma: F,
    p: &mut Product<'_, '_>,
    t: &Tile<'_>,
    step: &Step,
) {
    let (ldc, w, n0, m0) = (p.ldc, step.w, step.n0, t.m0);
    let rows = t.rows.min(H);
    // `sums[i]` is row `i` of the tile, a vector over its columns.
    let mut sums = [[0.0f32; W]; H];
    if !step.first {
        for (i, s) in sums.iter_mut().enumerate().take(rows) {
            let from = &p.c[(m0 + i) * ldc + n0..][..w];
            match from.first_chunk::<W>() {
                Some(full) => *s = *full,
                None => s[..w].copy_from_slice(from),
            }
        }
    }
    match t.b {
        Operand::Panel(b) => {
            let c0 = t.c0;
            a_micro::<F, H, W, _>(fma, &mut sums, t, b.iter().map(|row| part::<W>(row, c0)));
        }
        Operand::InPlace { b, ld } => {
            const ZEROS: Row = [0.0; PANEL];
            let zeros = ZEROS.first_chunk::<W>().unwrap_or(&[0.0; W]);
            let rows = b
                .chunks(ld.max(1))
                .map(|row| row.first_chunk::<W>().unwrap_or(zeros));
            a_micro::<F, H, W, _>(fma, &mut sums, t, rows);
        }
        Operand::Offsets { b, offsets } => {
            const ZEROS: Row = [0.0; PANEL];
            let zeros = ZEROS.first_chunk::<W>().unwrap_or(&[0.0; W]);
            // `product` checked every row's columns inside `b`: the fallback is never taken.
            let rows = offsets.iter().map(|&o| {
                b.get(o as usize..)
                    .and_then(|row| row.first_chunk::<W>())
                    .unwrap_or(zeros)
            });
            a_micro::<F, H, W, _>(fma, &mut sums, t, rows);
        }
    }
    for (i, s) in sums.iter_mut().enumerate().take(rows) {
        store_row(p, m0 + i, n0, w, s, step.last);
    }
    activate_tile(p, m0, rows, n0, w, step.last);
}

/// A tile row's sums `s` into row `i` of `C`, its `w` columns from `n0`; when they are `last`
/// (the element's whole `k` summed), with the epilogue: a bias alone on the row in registers,
/// an activation (or Gemm's `beta * C`, read per column inside `C`) on the stored columns, a
/// whole tile row as an array of constant length. An activation's loops over the sums in
/// registers kept the whole tile's sums in memory through its products: alone, the same bits,
/// pointwise Convs with a fused Relu ran 1.1-1.5x faster so (16 -> 96 at 112 x 112 1.41x,
/// 32 -> 64 at 12 x 12 1.49x), 3x3 Convs 1.05-1.3x, without an activation 0.95-1.05x. A
/// MatMul with a fused GELU ran 0.92-0.96x (on a slice of the stored row's length, 0.65x; on a
/// copy of the sums, pointwise Convs 0.55-0.75x).
#[inline(always)]
fn store_row<const W: usize>(
    p: &mut Product<'_, '_>,
    i: usize,
    n0: usize,
    w: usize,
    s: &mut [f32; W],
    last: bool,
) {
    // A chain of dependent steps (`exp`, a division) waits for the whole tile: [`activate_tile`].
    let act = p.act.in_registers();
    let gemm_c = matches!(p.bias, Bias::Gemm { c: Some(_), .. });
    let in_registers = last && !gemm_c && matches!(act, Activation::None);
    if in_registers {
        add_bias(p.bias, i, n0, s);
    }
    let out = &mut p.c[i * p.ldc + n0..][..w];
    match out.first_chunk_mut::<W>() {
        Some(full) => {
            *full = *s;
            if last && !in_registers {
                // A whole tile row: loops of a constant length, whole vectors.
                finish(p.bias, act, i, n0, full);
            }
        }
        None => {
            out.copy_from_slice(&s[..w]);
            if last && !in_registers {
                finish(p.bias, act, i, n0, out);
            }
        }
    }
}

/// A chain activation ([`Activation::is_chain`]: Sigmoid, SiLU, GELU) on a finished tile's
/// stored rows `m0..m0 + rows`, columns `n0..n0 + w`, after [`store_row`] stored them all: its
/// thirty dependent steps on one or two vectors at a time (a tile row), the stored row read
/// back by the next step, left each row waiting on the last; a pointwise Conv of 16 -> 64 at
/// 48 x 48 with SiLU took twice ONNX Runtime's Conv and SiLU nodes.
#[inline(always)]
fn activate_tile(p: &mut Product<'_, '_>, m0: usize, rows: usize, n0: usize, w: usize, last: bool) {
    if !last || !p.act.is_chain() {
        return;
    }
    for i in m0..m0 + rows {
        p.act.apply_chain(&mut p.c[i * p.ldc + n0..][..w]);
    }
}

/// The micro-kernel for the tile's `A`: packed, or its rows in place (a tile's rows beyond
/// `A`'s last repeat that last row: their sums are never stored).
#[inline(always)]
fn a_micro<'b, F: MulAdd, const H: usize, const W: usize, I: Iterator<Item = &'b [f32; W]>>(
    fma: F,
    sums: &mut [[f32; W]; H],
    t: &Tile<'_>,
    b: I,
) {
    match t.a {
        ATile::Panel { rows, r0 } => micro::<F, H, W, _>(fma, sums, rows, r0, b),
        ATile::Rows { a, lda, k0, kc } => {
            let last = t.rows.max(1) - 1;
            let rows: [&[f32]; H] =
                core::array::from_fn(|i| &a[(t.m0 + i.min(last)) * lda + k0..][..kc]);
            micro_rows::<F, H, W, _>(fma, sums, &rows, b);
        }
    }
}

/// The micro-kernel: `sums[i][j] = fma(a[p][r0 + i], b[p][j], sums[i][j])` for every `p` in
/// order (`b` gives the tile's `W` columns of each row of `B`): per step one vector of `B`, `H`
/// elements of `A`, `H` fused multiply-adds of `W` lanes.
#[inline(always)]
fn micro<'b, F: MulAdd, const H: usize, const W: usize, I: Iterator<Item = &'b [f32; W]>>(
    fma: F,
    sums: &mut [[f32; W]; H],
    a: &[Row],
    r0: usize,
    b: I,
) {
    match H {
        16 => micro16::<F, W, I>(fma, sums, a, r0, b),
        8 => micro8::<F, W, I>(fma, sums, a, r0, b),
        6 => micro6::<F, W, I>(fma, sums, a, r0, b),
        4 => micro4::<F, W, I>(fma, sums, a, r0, b),
        2 => micro2::<F, W, I>(fma, sums, a, r0, b),
        _ => micro1::<F, W, I>(fma, sums, a, r0, b),
    }
}

/// A micro-kernel of `$h` rows, each row's sums a variable of its own (so that each is a vector
/// register, whatever the compiler's unrolling limits).
macro_rules! micro_fn {
    ($name:ident, $h:literal, [$($s:ident $i:literal),+]) => {
        #[inline(always)]
        fn $name<'b, F: MulAdd, const W: usize, I: Iterator<Item = &'b [f32; W]>>(
            fma: F,
            sums: &mut [[f32; W]],
            a: &[Row],
            r0: usize,
            b: I,
        ) {
            let Ok(rows) = <&mut [[f32; W]; $h]>::try_from(sums) else {
                return;
            };
            let [$(mut $s),+] = *rows;
            for (ar, bv) in a.iter().zip(b) {
                let av = part::<$h>(ar, r0);
                $(
                    fma.mul_add(&mut $s, av[$i], bv);
                )+
            }
            *rows = [$($s),+];
        }
    };
}
/// The micro-kernel on `A`'s rows in place: `sums[i][j] += a[i][p] * b[p][j]` for every `p` in
/// order, the same sums as [`micro`]'s.
#[inline(always)]
fn micro_rows<'b, F: MulAdd, const H: usize, const W: usize, I: Iterator<Item = &'b [f32; W]>>(
    fma: F,
    sums: &mut [[f32; W]; H],
    a: &[&[f32]; H],
    b: I,
) {
    match H {
        16 => rows16::<F, W, I>(fma, sums, a, b),
        14 => rows14::<F, W, I>(fma, sums, a, b),
        8 => rows8::<F, W, I>(fma, sums, a, b),
        6 => rows6::<F, W, I>(fma, sums, a, b),
        4 => rows4::<F, W, I>(fma, sums, a, b),
        2 => rows2::<F, W, I>(fma, sums, a, b),
        _ => rows1::<F, W, I>(fma, sums, a, b),
    }
}

/// [`micro_fn`] with `A`'s `$h` rows read in place (each of the same length, the steps of `k`).
macro_rules! micro_rows_fn {
    ($name:ident, $h:literal, [$($s:ident $r:ident $i:literal),+]) => {
        #[inline(always)]
        fn $name<'b, F: MulAdd, const W: usize, I: Iterator<Item = &'b [f32; W]>>(
            fma: F,
            sums: &mut [[f32; W]],
            a: &[&[f32]],
            b: I,
        ) {
            let (Ok(rows), Ok(a)) = (
                <&mut [[f32; W]; $h]>::try_from(sums),
                <&[&[f32]; $h]>::try_from(a),
            ) else {
                return;
            };
            let [$(mut $s),+] = *rows;
            let kc = a[0].len();
            $(let $r = &a[$i][..kc];)+
            for (p, bv) in b.take(kc).enumerate() {
                $(
                    fma.mul_add(&mut $s, $r[p], bv);
                )+
            }
            *rows = [$($s),+];
        }
    };
}
micro_rows_fn!(rows16, 16, [s0 r0 0, s1 r1 1, s2 r2 2, s3 r3 3, s4 r4 4, s5 r5 5, s6 r6 6, s7 r7 7, s8 r8 8, s9 r9 9, s10 r10 10, s11 r11 11, s12 r12 12, s13 r13 13, s14 r14 14, s15 r15 15]);
micro_rows_fn!(rows14, 14, [s0 r0 0, s1 r1 1, s2 r2 2, s3 r3 3, s4 r4 4, s5 r5 5, s6 r6 6, s7 r7 7, s8 r8 8, s9 r9 9, s10 r10 10, s11 r11 11, s12 r12 12, s13 r13 13]);
micro_rows_fn!(rows8, 8, [s0 r0 0, s1 r1 1, s2 r2 2, s3 r3 3, s4 r4 4, s5 r5 5, s6 r6 6, s7 r7 7]);
micro_rows_fn!(rows6, 6, [s0 r0 0, s1 r1 1, s2 r2 2, s3 r3 3, s4 r4 4, s5 r5 5]);
micro_rows_fn!(rows4, 4, [s0 r0 0, s1 r1 1, s2 r2 2, s3 r3 3]);
micro_rows_fn!(rows2, 2, [s0 r0 0, s1 r1 1]);
micro_rows_fn!(rows1, 1, [s0 r0 0]);

micro_fn!(micro16, 16, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7, s8 8, s9 9, s10 10, s11 11, s12 12, s13 13, s14 14, s15 15]);
micro_fn!(micro8, 8, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5, s6 6, s7 7]);
micro_fn!(micro6, 6, [s0 0, s1 1, s2 2, s3 3, s4 4, s5 5]);
micro_fn!(micro4, 4, [s0 0, s1 1, s2 2, s3 3]);
micro_fn!(micro2, 2, [s0 0, s1 1]);
micro_fn!(micro1, 1, [s0 0]);

/// `row[at..at + N]` (zeros should it not fit, which a tile inside its panel never does).
#[inline(always)]
fn part<const N: usize>(row: &Row, at: usize) -> &[f32; N] {
    const ZEROS: Row = [0.0; PANEL];
    row.get(at..)
        .and_then(|r| r.first_chunk::<N>())
        .unwrap_or_else(|| ZEROS.first_chunk::<N>().unwrap_or(&[0.0; N]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{Level, detected, limit};
    use crate::test_values::values;
    use std::vec;
    use std::vec::Vec;

    /// The plain triple loop, a fused multiply-add per term in increasing k from zero (std's
    /// `mul_add`, IEEE 754 fusedMultiplyAdd): the bits every level must give.
    fn reference(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0f32;
                for p in 0..k {
                    s = a[i * k + p].mul_add(b[p * n + j], s);
                }
                c[i * n + j] = s;
            }
        }
        c
    }

    fn levels() -> Vec<Level> {
        [Level::Portable, Level::Avx2, Level::Avx512]
            .into_iter()
            .filter(|&l| l <= detected())
            .collect()
    }

    /// `A B` with `A` given as rows or packed, `B` packed now or ahead.
    #[allow(clippy::too_many_arguments)]
    fn compute(
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        bm: &[f32],
        pack_a: bool,
        pack_b: bool,
        words: usize,
        bias: Bias<'_>,
        act: Activation,
    ) -> Vec<f32> {
        let mut c = vec![f32::NAN; m * n];
        let mut scratch = vec![0u64; words];
        let mut packed_a = vec![
            0.0f32;
            crate::pack::conv_weights_shape(&[m, k], 1)
                .unwrap()
                .iter()
                .product()
        ];
        crate::pack::conv_weights(a, &[m, k], 1, &mut packed_a).unwrap();
        let mut packed_b = vec![0.0f32; crate::pack::matrix_shape(k, n).unwrap().iter().product()];
        crate::pack::matrix(bm, k, n, false, &mut packed_b).unwrap();
        let mut prod = Product {
            m,
            n,
            k,
            c: &mut c,
            ldc: n,
            bias,
            act,
        };
        let a = if pack_a {
            A::Packed(packed_a.as_chunks::<PANEL>().0)
        } else {
            A::Rows { a, lda: k }
        };
        let rm = RowMajor { b: bm, ld: n };
        let b = if pack_b {
            B::Packed(packed_b.as_chunks::<PANEL>().0)
        } else {
            B::Pack(&rm)
        };
        product(&mut prod, a, b, panel_buffer(&mut scratch)).unwrap();
        c
    }

    /// `A B` with `B` read in place (`A` packed ahead, or as rows), `B` exactly `k x n`.
    fn in_place(m: usize, n: usize, k: usize, a: &[f32], bm: &[f32], pack_a: bool) -> Vec<f32> {
        let mut c = vec![f32::NAN; m * n];
        let shape = crate::pack::conv_weights_shape(&[m, k], 1).unwrap();
        let mut packed_a = vec![0.0f32; shape.iter().product()];
        crate::pack::conv_weights(a, &[m, k], 1, &mut packed_a).unwrap();
        let mut prod = Product {
            m,
            n,
            k,
            c: &mut c,
            ldc: n,
            bias: Bias::None,
            act: Activation::None,
        };
        let a = if pack_a {
            A::Packed(packed_a.as_chunks::<PANEL>().0)
        } else {
            A::Rows { a, lda: k }
        };
        // No scratch when A is packed; a panel of B otherwise (it is packed from row-major).
        let mut scratch = vec![0u64; if pack_a { 0 } else { scratch_words(k, true) }];
        let b: B<'_, RowMajor<'_>> = B::InPlace { b: bm, ld: n };
        product(&mut prod, a, b, panel_buffer(&mut scratch)).unwrap();
        c
    }

    #[test]
    fn every_shape_layout_and_level_gives_the_bits_of_the_triple_loop() {
        let shapes = [
            (1, 1, 1),
            (1, 1000, 37),
            (3, 5, 7),
            (16, 16, 16),
            (17, 33, 300),
            (24, 49, 96),
            (6, 17, 513),
            (40, 8, 2),
            (30, 70, 530),
            (14, 40, 70),
            // Rows ending in half a panel with a `k` past `WIDE_POINTWISE_K`: the wide tiles
            // (`WIDE_HALF_PANEL_K`), and a partial pair of panels of columns.
            (24, 70, 200),
            (40, 33, 256),
        ];
        for (m, n, k) in shapes {
            let a = values(m * k, 1);
            let bm = values(k * n, 2);
            let want = reference(m, n, k, &a, &bm);
            for level in levels() {
                limit(level);
                for (pack_a, pack_b) in [(false, false), (true, false), (false, true), (true, true)]
                {
                    let full = scratch_words(k, !pack_b);
                    for words in [full, PANEL, 3 * PANEL] {
                        let c = compute(
                            m,
                            n,
                            k,
                            &a,
                            &bm,
                            pack_a,
                            pack_b,
                            words,
                            Bias::None,
                            Activation::None,
                        );
                        for (x, y) in c.iter().zip(&want) {
                            assert_eq!(
                                x.to_bits(),
                                y.to_bits(),
                                "{m}x{n}x{k} at {level:?}, packed {pack_a} {pack_b}, {words} words"
                            );
                        }
                    }
                }
                for pack_a in [true, false] {
                    let c = in_place(m, n, k, &a, &bm, pack_a);
                    for (x, y) in c.iter().zip(&want) {
                        assert_eq!(
                            x.to_bits(),
                            y.to_bits(),
                            "{m}x{n}x{k} at {level:?}, B in place, A packed {pack_a}"
                        );
                    }
                }
            }
            limit(Level::Avx512);
        }
    }

    #[test]
    fn wide_tiles_and_their_partial_edges_give_every_bias_the_same_bits() {
        // 29 rows (two tiles of 12, one of 8 for the last 5), 77 columns (two pairs of panels
        // and a partial pair of 13), 300 steps (two blocks of `k`): every edge of the sweep.
        let (m, n, k) = (29, 77, 300);
        let a = values(m * k, 6);
        let bm = values(k * n, 7);
        let (rows, cols, c_in) = (values(m, 8), values(n, 9), values(m * n, 10));
        let biases = [
            Bias::Row(&rows),
            Bias::Col(&cols),
            Bias::Gemm {
                alpha: 0.5,
                beta: -1.5,
                c: Some((&c_in, n, 1)),
            },
            Bias::Gemm {
                alpha: 2.0,
                beta: 1.0,
                c: Some((&cols, 0, 1)),
            },
        ];
        for bias in biases {
            limit(Level::Portable);
            let want = compute(m, n, k, &a, &bm, false, true, 0, bias, Activation::Relu);
            for level in levels() {
                limit(level);
                let c = compute(m, n, k, &a, &bm, false, true, 0, bias, Activation::Relu);
                let same = c.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{bias:?} at {level:?}");
            }
            limit(Level::Avx512);
        }
    }

    #[test]
    fn transposed_panels_and_the_epilogue() {
        let (m, n, k) = (5, 21, 19);
        let a = values(m * k, 3);
        let bm = values(k * n, 4);
        let mut bt = vec![0.0f32; n * k];
        for p in 0..k {
            for j in 0..n {
                bt[j * k + p] = bm[p * n + j];
            }
        }
        let bias = values(m, 5);
        let want: Vec<f32> = reference(m, n, k, &a, &bm)
            .iter()
            .enumerate()
            .map(|(idx, &s)| crate::activation::relu(s + bias[idx / n]))
            .collect();
        let mut c = vec![0.0f32; m * n];
        let mut scratch = vec![0u64; scratch_words(k, true)];
        let mut prod = Product {
            m,
            n,
            k,
            c: &mut c,
            ldc: n,
            bias: Bias::Row(&bias),
            act: Activation::Relu,
        };
        let t = Transposed { b: &bt, ld: k };
        product(
            &mut prod,
            A::Rows { a: &a, lda: k },
            B::Pack(&t),
            panel_buffer(&mut scratch),
        )
        .unwrap();
        assert_eq!(c, want);
        let packed = compute(
            m,
            n,
            k,
            &a,
            &bm,
            true,
            true,
            0,
            Bias::Row(&bias),
            Activation::Relu,
        );
        assert_eq!(packed, want);
    }

    /// One row times panels packed at build time (the wide levels' own path) gives the general
    /// tiles' bits (the portable level's), with every epilogue.
    #[test]
    fn one_row_times_packed_panels_gives_the_tiles_bits() {
        for (n, k) in [(1, 1), (37, 300), (200, 17), (1000, 64)] {
            let a = values(k, 6);
            let bm = values(k * n, 7);
            let col = values(n, 8);
            let c_in = values(n, 9);
            let biases = [
                Bias::None,
                Bias::Col(&col),
                Bias::Gemm {
                    alpha: 0.5,
                    beta: 1.5,
                    c: Some((&c_in, 0, 1)),
                },
            ];
            for bias in biases {
                let run = |level| {
                    limit(level);
                    let c = compute(1, n, k, &a, &bm, false, true, 0, bias, Activation::Relu);
                    limit(Level::Avx512);
                    c
                };
                let want = run(Level::Portable);
                for level in levels() {
                    let got = run(level);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(x, y)| x.to_bits() == y.to_bits());
                    assert!(same, "n {n}, k {k}, {bias:?} at {level:?}");
                }
            }
        }
    }
}
