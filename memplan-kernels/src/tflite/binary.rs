//! The reference ADD, SUB and MUL with broadcasting, float32 or int8.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Binary {
    Add,
    Sub,
    Mul,
}

/// ADD, SUB, MUL with broadcasting: float32 (then the activation clamp), or int8 (ADD and MUL)
/// with TFLite's rescaling.
pub(super) fn binary(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    op: Binary,
) -> Result<(), KernelError> {
    let (a_shape, a) = value(inputs, 0)?;
    let (b_shape, b) = value(inputs, 1)?;
    let out_shape: Dims = collect(
        outputs
            .first()
            .map(|o| o.shape)
            .unwrap_or(&[])
            .iter()
            .copied(),
    )?;
    let sa = crate::broadcast::broadcast_strides(a_shape, &out_shape)?;
    let sb = crate::broadcast::broadcast_strides(b_shape, &out_shape)?;
    let strides = [sa, sb];
    match (a, b, out_dtype(outputs, 0)?) {
        (Data::F32(a), Data::F32(b), DType::F32) => {
            let (lo, hi) = float_range(attrs)?;
            let (_, out) = output::<f32>(outputs, 0)?;
            crate::broadcast::for_each(&out_shape, &strides, |i, at| {
                let (x, y) = (a[at[0]], b[at[1]]);
                let v = match op {
                    Binary::Add => x + y,
                    Binary::Sub => x - y,
                    Binary::Mul => x * y,
                };
                out[i] = clamp_f(v, lo, hi);
            })
        }
        (Data::I8(a), Data::I8(b), DType::I8) => {
            let (lo, hi) = int_range(attrs)?;
            let off1 = int(attrs, "input1_offset")?;
            let off2 = int(attrs, "input2_offset")?;
            let out_off = int(attrs, "output_offset")?;
            let out_mult = int(attrs, "output_multiplier")?;
            let out_shift = int(attrs, "output_shift")?;
            let (_, out) = output::<i8>(outputs, 0)?;
            match op {
                Binary::Add | Binary::Sub => {
                    let left = int(attrs, "left_shift")?.clamp(0, 30);
                    let (m1, s1) = (
                        int(attrs, "input1_multiplier")?,
                        int(attrs, "input1_shift")?,
                    );
                    let (m2, s2) = (
                        int(attrs, "input2_multiplier")?,
                        int(attrs, "input2_shift")?,
                    );
                    let sub = matches!(op, Binary::Sub);
                    crate::broadcast::for_each(&out_shape, &strides, |i, at| {
                        let x = i32::from(a[at[0]])
                            .wrapping_add(off1)
                            .wrapping_shl(left as u32);
                        let y = i32::from(b[at[1]])
                            .wrapping_add(off2)
                            .wrapping_shl(left as u32);
                        let (x, y) = (mbqm(x, m1, s1), mbqm(y, m2, s2));
                        let raw = if sub {
                            x.wrapping_sub(y)
                        } else {
                            x.wrapping_add(y)
                        };
                        let v = mbqm(raw, out_mult, out_shift).saturating_add(out_off);
                        out[i] = to_i8(v, lo, hi);
                    })
                }
                Binary::Mul => crate::broadcast::for_each(&out_shape, &strides, |i, at| {
                    let x = i32::from(a[at[0]]).wrapping_add(off1);
                    let y = i32::from(b[at[1]]).wrapping_add(off2);
                    let v = mbqm(x.wrapping_mul(y), out_mult, out_shift).saturating_add(out_off);
                    out[i] = to_i8(v, lo, hi);
                }),
            }
        }
        (a, b, o) => bail!(
            "inputs {} and {} and output {} is not a supported combination",
            a.dtype().name(),
            b.dtype().name(),
            o.name()
        ),
    }
}
