//! DepthToSpace and SpaceToDepth: blocks of `blocksize x blocksize` pixels moved between the
//! channel and the spatial dimensions of an `[N, C, H, W]` tensor.
//!
//! DepthToSpace, output `(c, h, w)` with `(i, j) = (h mod b, w mod b)` reads input channel
//! `(i b + j) C_out + c` (mode DCR, the default) or `c b^2 + i b + j` (mode CRD) at
//! `(h / b, w / b)`. SpaceToDepth (DCR order) is the inverse of the DCR mode.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail, error};
use crate::tensor::{Elem, Input, Output, dispatch, expect_shape, out_dtype, output, typed};

/// DepthToSpace (`to_space`) or SpaceToDepth.
pub(crate) fn space_depth(
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    to_space: bool,
) -> Result<(), KernelError> {
    fn typed_move<T: Elem>(
        attrs: &Attrs,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
        to_space: bool,
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let b = usize::try_from(attrs.int("blocksize", 0)?)
            .ok()
            .filter(|&b| (1..=1 << 12).contains(&b))
            .ok_or_else(|| error!("blocksize must be positive"))?;
        let crd = match attrs.str("mode", "DCR")? {
            "DCR" => false,
            "CRD" if to_space => true,
            other => bail!("mode {other:?} is not supported"),
        };
        let &[n, c, h, w] = xs else {
            bail!("input {xs:?} must be [N, C, H, W]");
        };
        let want = if to_space {
            if c % (b * b) != 0 {
                bail!("{c} channels do not divide into blocks of {b}x{b}");
            }
            [n, c / (b * b), h * b, w * b]
        } else {
            if h % b != 0 || w % b != 0 {
                bail!("{h}x{w} does not divide into blocks of {b}x{b}");
            }
            [n, c * b * b, h / b, w / b]
        };
        let (ys, y) = output::<T>(outputs, 0)?;
        expect_shape(0, ys, &want)?;
        let [_, oc, oh, ow] = want;
        let mut k = 0;
        for bn in 0..n {
            for co in 0..oc {
                for ho in 0..oh {
                    for wo in 0..ow {
                        let (ci, hi, wi) = if to_space {
                            let (i, j) = (ho % b, wo % b);
                            let ci = if crd {
                                co * b * b + i * b + j
                            } else {
                                (i * b + j) * oc + co
                            };
                            (ci, ho / b, wo / b)
                        } else {
                            let block = co / c;
                            (co % c, ho * b + block / b, wo * b + block % b)
                        };
                        y[k] = x[((bn * c + ci) * h + hi) * w + wi];
                        k += 1;
                    }
                }
            }
        }
        Ok(())
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_move(attrs, inputs, outputs, to_space)
    )
}
