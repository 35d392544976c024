//! Sliding-window geometry shared by Conv and the pools: kernel, strides, dilations, pads
//! (explicit or `auto_pad`) and the output size along each spatial dimension; a Conv node's
//! checked shapes ([`ConvGeometry`], float and integer), a pool's window ([`pool_window`], float
//! and 8-bit) and the walk over one output's taps ([`Window::for_each_tap`]).
//!
//! Along one dimension of size `n`, a kernel of `k` taps spaced by dilation `d` spans
//! `(k - 1) d + 1` elements; with `b` and `e` zeros padded at the beginning and end and stride `s`,
//! output element `o` reads input elements `o s - b + t d` for taps `t`, those outside `0..n`
//! being padding. The kernels handle up to 3 spatial dimensions, padded to exactly 3 with size-1
//! leading dimensions.

use super::attrs::Attrs;
use super::error::{KernelError, bail, error};
use super::geometry::{self, Padding};
use super::tensor::{Dims, MAX_RANK, collect, dims_filled, try_collect};

/// The window of one operator along every spatial dimension (always 3 after [`Window::to_3d`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    /// Input sizes.
    pub(crate) input: Dims,
    /// Kernel taps.
    pub(crate) kernel: Dims,
    /// Strides.
    pub(crate) strides: Dims,
    /// Dilations.
    pub(crate) dilations: Dims,
    /// Padding before the first element.
    pub(crate) pad_begin: Dims,
    /// Padding after the last element.
    pub(crate) pad_end: Dims,
    /// Output sizes.
    pub(crate) output: Dims,
}

/// The largest kernel size, stride, dilation, pad or spatial input size accepted.
const MAX_EXTENT: usize = 1 << 20;

/// Ceiling division of non-negative numbers.
fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

impl Window {
    /// The window for spatial input sizes `input` and kernel `kernel`, from the attributes
    /// `strides`, `dilations`, `pads`, `auto_pad` (and `ceil_mode` when `ceil` is true).
    /// `given` is the caller's output size, which must be the computed one.
    pub(crate) fn new(
        attrs: &Attrs<'_>,
        input: &[usize],
        kernel: &[usize],
        ceil: bool,
        given: &[usize],
    ) -> Result<Window, KernelError> {
        let r = input.len();
        if kernel.len() != r || given.len() != r {
            bail!(
                "kernel {kernel:?} and output {given:?} do not match the {r} spatial dimensions {input:?}"
            );
        }
        if r == 0 || r > 3 {
            bail!("{r} spatial dimensions are not supported (1 to 3 are)");
        }
        let strides = attrs.usizes("strides", r, 1)?;
        let dilations = attrs.usizes("dilations", r, 1)?;
        if strides.contains(&0) || dilations.contains(&0) || kernel.contains(&0) {
            bail!("strides, dilations and kernel sizes must be positive");
        }
        // Bounds that keep every position computation far from overflow (and loops finite).
        let pads = attrs.ints("pads")?.unwrap_or(&[]);
        if [&strides[..], &dilations[..], kernel, input]
            .iter()
            .any(|v| v.iter().any(|&x| x > MAX_EXTENT))
            || pads.iter().any(|&p| p > MAX_EXTENT as i64)
        {
            bail!("a kernel size, stride, dilation, pad or input size exceeds {MAX_EXTENT}");
        }
        let auto_pad = attrs.str("auto_pad", "NOTSET")?;
        let mut pad_begin = dims_filled(0, r)?;
        let mut pad_end = dims_filled(0, r)?;
        let mut output = dims_filled(0, r)?;
        for i in 0..r {
            let padding = match auto_pad {
                "NOTSET" => {
                    let pads = attrs.usizes("pads", 2 * r, 0)?;
                    Padding::Explicit {
                        begin: pads[i] as u64,
                        end: pads[i + r] as u64,
                    }
                }
                "VALID" => Padding::Explicit { begin: 0, end: 0 },
                "SAME_UPPER" => Padding::SameUpper,
                "SAME_LOWER" => Padding::SameLower,
                other => bail!("auto_pad {other:?} is not supported"),
            };
            let a = geometry::axis(
                input[i] as u64,
                kernel[i] as u64,
                strides[i] as u64,
                dilations[i] as u64,
                padding,
                ceil && matches!(padding, Padding::Explicit { .. }),
            )
            .map_err(|e| error!("{e} along spatial dimension {i}"))?;
            // The extents are at most 2^20 each (above), so every number fits a usize.
            let (o, begin, end) = (a.output as usize, a.begin as usize, a.end as usize);
            // ONNX shape inference keeps a last window that would start past the input, ONNX
            // Runtime drops it: an output sized for it would hold values no reference computes.
            if a.dropped_last && given[i] == o + 1 {
                bail!(
                    "with ceil_mode, output {} along spatial dimension {i} would start past the input (ONNX Runtime computes {o})",
                    o + 1
                );
            }
            pad_begin[i] = begin;
            pad_end[i] = end;
            output[i] = o;
        }
        if output[..] != *given {
            bail!("the output's spatial size is {given:?}, the window computes {output:?}");
        }
        Ok(Window {
            input: collect(input.iter().copied())?,
            kernel: collect(kernel.iter().copied())?,
            strides,
            dilations,
            pad_begin,
            pad_end,
            output,
        })
    }

    /// The same window with size-1 leading dimensions so that it has exactly 3 (a window from
    /// [`Window::new`] has 1 to 3; only the last 3 would be kept of more).
    pub(crate) fn to_3d(&self) -> Window {
        let pad = |v: &[usize], fill: usize| -> Dims {
            let n = v.len().min(3);
            let mut out = [fill; MAX_RANK];
            out[3 - n..3].copy_from_slice(&v[v.len() - n..]);
            let mut out = Dims::from(out);
            out.truncate(3);
            out
        };
        Window {
            input: pad(&self.input, 1),
            kernel: pad(&self.kernel, 1),
            strides: pad(&self.strides, 1),
            dilations: pad(&self.dilations, 1),
            pad_begin: pad(&self.pad_begin, 0),
            pad_end: pad(&self.pad_end, 0),
            output: pad(&self.output, 1),
        }
    }

    /// The input position of output `o`, tap `t` along dimension `i`, if inside the input.
    #[inline]
    pub(crate) fn source(&self, i: usize, o: usize, t: usize) -> Option<usize> {
        (o * self.strides[i] + t * self.dilations[i])
            .checked_sub(self.pad_begin[i])
            .filter(|&x| x < self.input[i])
    }

    /// The range of outputs along dimension `i` whose tap `t` falls inside the input.
    pub(crate) fn valid_outputs(&self, i: usize, t: usize) -> core::ops::Range<usize> {
        let s = self.strides[i];
        let off = t * self.dilations[i];
        let b = self.pad_begin[i];
        // Need o*s + off >= b and o*s + off - b < n.
        let lo = if off >= b { 0 } else { ceil_div(b - off, s) };
        let hi = if self.input[i] + b > off {
            ceil_div(self.input[i] + b - off, s).min(self.output[i])
        } else {
            0
        };
        lo..hi.max(lo)
    }

    /// The taps of output `o` along dimension `i` that fall inside the input: `t` with
    /// `0 <= o s + t d - b < n`, within `0..k`.
    #[inline]
    pub(crate) fn valid_taps(&self, i: usize, o: usize) -> core::ops::Range<usize> {
        let (d, b, n) = (self.dilations[i], self.pad_begin[i], self.input[i]);
        let origin = o * self.strides[i];
        let lo = if origin >= b {
            0
        } else {
            ceil_div(b - origin, d)
        };
        let hi = if n + b > origin {
            ceil_div(n + b - origin, d).min(self.kernel[i])
        } else {
            0
        };
        lo..hi.max(lo)
    }

    /// Calls `f(source, tap)` for every tap of output `(z, y, x)` of a 3-D window (see
    /// [`Window::to_3d`]) that falls inside the input, in row-major tap order (kd, kh, kw):
    /// `source` is the input element's index in its plane, `tap` the tap's index in the kernel.
    /// Only those taps are visited: a window mostly in the padding (a kernel of 2^20 taps per
    /// dimension over a 4 x 4 x 4 input) costs what it reads, not its size.
    #[inline]
    pub(crate) fn for_each_tap(&self, [zo, yo, xo]: [usize; 3], mut f: impl FnMut(usize, usize)) {
        let (ih, iw) = (self.input[1], self.input[2]);
        let (kh, kw) = (self.kernel[1], self.kernel[2]);
        let position = |i: usize, o: usize, t: usize| {
            o * self.strides[i] + t * self.dilations[i] - self.pad_begin[i]
        };
        let columns = self.valid_taps(2, xo);
        for td in self.valid_taps(0, zo) {
            let zi = position(0, zo, td);
            for th in self.valid_taps(1, yo) {
                let yi = position(1, yo, th);
                for tw in columns.clone() {
                    let xi = position(2, xo, tw);
                    f((zi * ih + yi) * iw + xi, (td * kh + th) * kw + tw);
                }
            }
        }
    }
}

/// The window of a pool (MaxPool, AveragePool; float32 and 8-bit) of input `xs` into output
/// `ys`, both `[N, C, spatial...]`: its `kernel_shape` (required), `ceil_mode` and the window's
/// attributes, in 3 dimensions.
pub(crate) fn pool_window(
    attrs: &Attrs<'_>,
    xs: &[usize],
    ys: &[usize],
) -> Result<Window, KernelError> {
    if xs.len() < 3 || ys.len() != xs.len() || ys[..2] != xs[..2] {
        bail!("input {xs:?} and output {ys:?} must be [N, C, spatial...] alike");
    }
    let Some(ks) = attrs.ints("kernel_shape")? else {
        bail!("attribute kernel_shape is required");
    };
    let kernel: Dims = try_collect(
        ks.iter()
            .map(|&k| usize::try_from(k).map_err(|_| error!("negative kernel size"))),
    )?;
    let ceil = attrs.int("ceil_mode", 0)? != 0;
    Ok(Window::new(attrs, &xs[2..], &kernel, ceil, &ys[2..])?.to_3d())
}

/// The checked geometry of one Conv node, float (`Conv`) or integer (`ConvInteger`,
/// `QLinearConv`): input `[N, C, spatial...]`, weight `[M, C / group, kernel...]`, output `[N, M,
/// spatial...]`.
#[derive(Clone)]
pub(crate) struct ConvGeometry {
    /// Batch, input channels, output channels, groups.
    pub(crate) n: usize,
    pub(crate) c: usize,
    pub(crate) m: usize,
    pub(crate) group: usize,
    /// The window in exactly 3 spatial dimensions.
    pub(crate) win: Window,
}

impl ConvGeometry {
    pub(crate) fn new(
        attrs: &Attrs<'_>,
        xs: &[usize],
        ws: &[usize],
        ys: &[usize],
    ) -> Result<Self, KernelError> {
        if xs.len() < 3 || ws.len() != xs.len() || ys.len() != xs.len() {
            bail!("input {xs:?}, weight {ws:?} and output {ys:?} must have the same rank >= 3");
        }
        let (n, c, m) = (xs[0], xs[1], ws[0]);
        let group = usize::try_from(attrs.int("group", 1)?)
            .ok()
            .filter(|&g| g > 0)
            .ok_or_else(|| error!("group must be positive"))?;
        if c % group != 0 || m % group != 0 || ws[1] * group != c {
            bail!("input channels {c}, weight {ws:?} and group {group} do not fit");
        }
        if let Some(ks) = attrs.ints("kernel_shape")?
            && (ks
                .iter()
                .zip(&ws[2..])
                .any(|(&k, &w)| usize::try_from(k) != Ok(w))
                || ks.len() != ws.len() - 2)
        {
            bail!("kernel_shape {ks:?} does not match the weight {ws:?}");
        }
        if ys[0] != n || ys[1] != m {
            bail!("output {ys:?} must be [{n}, {m}, ...]");
        }
        let win = Window::new(attrs, &xs[2..], &ws[2..], false, &ys[2..])?.to_3d();
        Ok(ConvGeometry {
            n,
            c,
            m,
            group,
            win,
        })
    }

    /// Each group reads one input channel, and there are several groups.
    pub(crate) fn depthwise(&self) -> bool {
        self.group > 1 && self.group == self.c
    }

    /// A 1x1 kernel with stride 1 and no padding: the input is the product's `B` as it is.
    pub(crate) fn pointwise(&self) -> bool {
        let w = &self.win;
        (0..3).all(|i| {
            w.kernel[i] == 1 && w.strides[i] == 1 && w.pad_begin[i] == 0 && w.pad_end[i] == 0
        })
    }

    pub(crate) fn taps(&self) -> usize {
        self.win.kernel.iter().product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Attr;

    fn attrs<'a>(list: &'a [(&'a str, Attr<'a>)]) -> Attrs<'a> {
        Attrs::new(list)
    }

    #[test]
    fn explicit_pads_strides_and_dilations() {
        let a = attrs(&[
            ("strides", Attr::Ints(&[2, 1])),
            ("pads", Attr::Ints(&[1, 0, 1, 2])),
            ("dilations", Attr::Ints(&[1, 2])),
        ]);
        // H: (7 + 2 - 3) / 2 + 1 = 4; W: span 5, (5 + 2 - 5) / 1 + 1 = 3.
        let w = Window::new(&a, &[7, 5], &[3, 3], false, &[4, 3]).unwrap();
        assert_eq!(&w.output[..], &[4, 3]);
        assert!(Window::new(&a, &[7, 5], &[3, 3], false, &[4, 4]).is_err());
        assert_eq!(w.source(0, 0, 0), None);
        assert_eq!(w.source(0, 0, 1), Some(0));
        assert_eq!(w.valid_outputs(0, 0), 1..4);
        assert_eq!(w.valid_outputs(1, 2), 0..1);
        let w3 = w.to_3d();
        assert_eq!(&w3.input[..], &[1, 7, 5]);
        assert_eq!(&w3.pad_begin[..], &[0, 1, 0]);
        assert_eq!(&w3.output[..], &[1, 4, 3]);
        assert_eq!(w3.source(1, 0, 1), Some(0));
    }

    #[test]
    fn auto_pad_same_and_valid() {
        let upper = attrs(&[
            ("auto_pad", Attr::Str("SAME_UPPER")),
            ("strides", Attr::Ints(&[2])),
        ]);
        // out = ceil(6 / 2) = 3, total pad = (3-1)*2 + 4 - 6 = 2... with kernel 4: 2*2+4-6 = 2.
        let w = Window::new(&upper, &[6], &[4], false, &[3]).unwrap();
        assert_eq!((w.pad_begin[0], w.pad_end[0]), (1, 1));
        let w = Window::new(&upper, &[5], &[2], false, &[3]).unwrap();
        // total = 2*2 + 2 - 5 = 1: SAME_UPPER puts the odd one at the end.
        assert_eq!((w.pad_begin[0], w.pad_end[0]), (0, 1));
        let lower = attrs(&[
            ("auto_pad", Attr::Str("SAME_LOWER")),
            ("strides", Attr::Ints(&[2])),
        ]);
        let w = Window::new(&lower, &[5], &[2], false, &[3]).unwrap();
        assert_eq!((w.pad_begin[0], w.pad_end[0]), (1, 0));
        let valid = attrs(&[("auto_pad", Attr::Str("VALID"))]);
        assert!(Window::new(&valid, &[5], &[2], false, &[4]).is_ok());
        let bad = attrs(&[("auto_pad", Attr::Str("WEIRD"))]);
        assert!(Window::new(&bad, &[5], &[2], false, &[4]).is_err());
    }

    #[test]
    fn ceil_mode_rounds_up_but_keeps_the_last_window_inside() {
        let a = attrs(&[("strides", Attr::Ints(&[2]))]);
        // (6 - 3) / 2 = 1.5: floor 2 outputs, ceil 3.
        assert!(Window::new(&a, &[6], &[3], false, &[2]).is_ok());
        assert!(Window::new(&a, &[6], &[3], true, &[3]).is_ok());
        // pads 1,1 on 5 with k=2 s=2: (7-2)/2 = 2.5 -> ceil 4; window 3 starts at 6 >= 5+1, so 3.
        let p = attrs(&[("strides", Attr::Ints(&[2])), ("pads", Attr::Ints(&[1, 1]))]);
        assert!(Window::new(&p, &[5], &[2], true, &[3]).is_ok());
        // The window past the input that ONNX shape inference would keep is refused.
        assert!(Window::new(&p, &[5], &[2], true, &[4]).is_err());
        assert!(Window::new(&p, &[5], &[2], true, &[5]).is_err());
    }

    #[test]
    fn issue_36_a_window_visits_the_taps_inside_the_input_only() {
        // Against every tap checked with `source`, on windows with strides, dilations and pads.
        for (input, kernel, strides, dilations, pads) in [
            (
                [5usize, 4, 6],
                [2usize, 3, 2],
                [1i64, 2, 3],
                [1i64, 2, 1],
                [1i64, 0, 2, 1, 2, 0],
            ),
            (
                [3, 3, 3],
                [3, 3, 3],
                [1, 1, 1],
                [1, 1, 1],
                [1, 1, 1, 1, 1, 1],
            ),
            (
                [2, 7, 1],
                [1, 4, 1],
                [2, 3, 1],
                [1, 3, 1],
                [0, 4, 0, 1, 5, 0],
            ),
        ] {
            let list = [
                ("strides", Attr::Ints(&strides)),
                ("dilations", Attr::Ints(&dilations)),
                ("pads", Attr::Ints(&pads)),
            ];
            let span = |i: usize| (kernel[i] - 1) * dilations[i] as usize + 1;
            let output: std::vec::Vec<usize> = (0..3)
                .map(|i| {
                    let padded = input[i] + (pads[i] + pads[i + 3]) as usize;
                    (padded - span(i)) / strides[i] as usize + 1
                })
                .collect();
            let w = Window::new(&attrs(&list), &input, &kernel, false, &output).unwrap();
            for z in 0..output[0] {
                for y in 0..output[1] {
                    for x in 0..output[2] {
                        let mut visited = std::vec::Vec::new();
                        w.for_each_tap([z, y, x], |source, tap| visited.push((source, tap)));
                        let mut want = std::vec::Vec::new();
                        for (td, th, tw) in (0..kernel[0]).flat_map(|a| {
                            (0..kernel[1]).flat_map(move |b| (0..kernel[2]).map(move |c| (a, b, c)))
                        }) {
                            if let (Some(zi), Some(yi), Some(xi)) =
                                (w.source(0, z, td), w.source(1, y, th), w.source(2, x, tw))
                            {
                                let source = (zi * input[1] + yi) * input[2] + xi;
                                want.push((source, (td * kernel[1] + th) * kernel[2] + tw));
                            }
                        }
                        assert_eq!(visited, want, "output {:?}", [z, y, x]);
                    }
                }
            }
        }
        // 2^20 taps a dimension over 4 x 4 x 4, padded by 2^20 - 1 before: 64 outputs of 2^60
        // taps, of which at most 64 each are read. Each output visited 2^20 rows (and 2^20
        // columns of each row inside) before: a MaxPool of this window took 0.30 s in a release
        // build, 92 us now.
        let big = 1i64 << 20;
        let pads = [big - 1, big - 1, big - 1, 0, 0, 0];
        let list = [("pads", Attr::Ints(&pads))];
        let k = 1usize << 20;
        let w = Window::new(&attrs(&list), &[4, 4, 4], &[k, k, k], false, &[4, 4, 4]).unwrap();
        let mut taps = 0;
        for o in 0..4 {
            w.for_each_tap([o, o, o], |_, _| taps += 1);
        }
        assert_eq!(taps, 1 + 8 + 27 + 64);
    }

    #[test]
    fn bad_geometry_is_an_error() {
        let a = Attrs::default();
        assert!(Window::new(&a, &[2], &[3], false, &[1]).is_err());
        assert!(Window::new(&a, &[], &[], false, &[]).is_err());
        assert!(Window::new(&a, &[1, 1, 1, 1], &[1, 1, 1, 1], false, &[1, 1, 1, 1]).is_err());
        let zero = attrs(&[("strides", Attr::Ints(&[0]))]);
        assert!(Window::new(&zero, &[4], &[1], false, &[4]).is_err());
    }
}
