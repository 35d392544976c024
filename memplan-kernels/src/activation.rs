//! A fused activation: the elementwise operator that followed a Conv or a Gemm, applied to each
//! output element as it is finished (while it is still in cache) instead of by a node of its
//! own. `memplan-build` fuses `Relu`, `Clip` (constant bounds), `HardSigmoid`, `HardSwish`,
//! `LeakyRelu` and `Sigmoid` into the Conv, Gemm or MatMul that produces their input, and says so
//! with two attributes (the names ONNX Runtime's `FusedConv` uses):
//!
//! - `activation`: the operator's name (`"Relu"`, `"Clip"`, `"HardSigmoid"`, `"HardSwish"`,
//!   `"LeakyRelu"`, `"Sigmoid"`), `"Silu"` for SiLU (Swish) as PyTorch exports it (`Sigmoid`
//!   of the input, then `Mul` by the input), or `"ErfGelu"` for the five nodes PyTorch exports
//!   GELU as (`Div` by a constant, `Erf`, `Add` a constant, `Mul` by the input, `Mul` by a
//!   constant);
//! - `activation_params`: its parameters as floats (`Clip`: `[min, max]`; `HardSigmoid`:
//!   `[alpha, beta]`; `LeakyRelu`: `[alpha]`; `ErfGelu`: `[divisor, addend, scale]`; none for
//!   the others).
//!
//! Each function is exactly the one of the standalone operators (`unary.rs`, `binary.rs`), in
//! their order, so a fused node computes the same bits as the nodes it replaces.

use crate::attrs::Attrs;
use crate::error::{KernelError, bail};

/// The activation applied to every output element (after the bias).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Activation {
    /// None: the identity.
    None,
    /// `max(x, 0)` (NaN stays NaN, as the Relu kernel).
    Relu,
    /// `min(max(x, lo), hi)`.
    Clip(f32, f32),
    /// `clamp(alpha x + beta, 0, 1)`.
    HardSigmoid(f32, f32),
    /// `x clamp(x / 6 + 1/2, 0, 1)`.
    HardSwish,
    /// `x < 0 ? alpha x : x`.
    LeakyRelu(f32),
    /// `1 / (1 + exp(-x))`, as the Sigmoid kernel.
    Sigmoid,
    /// `x * sigmoid(x)`: SiLU (Swish) as PyTorch exports it, the Sigmoid kernel then the Mul
    /// kernel.
    Silu,
    /// `(x * (erf(x / divisor) + addend)) * scale`: GELU as PyTorch exports it, node by node.
    ErfGelu(f32, f32, f32),
}

impl Activation {
    /// The activation a node's `activation` and `activation_params` attributes name.
    pub(crate) fn from_attrs(attrs: &Attrs<'_>) -> Result<Self, KernelError> {
        let name = attrs.str("activation", "")?;
        let params = attrs.floats("activation_params")?.unwrap_or(&[]);
        let want = |n: usize| -> Result<(), KernelError> {
            if params.len() != n {
                bail!(
                    "activation {name:?} takes {n} activation_params, found {}",
                    params.len()
                );
            }
            Ok(())
        };
        Ok(match name {
            "" => {
                want(0)?;
                Activation::None
            }
            "Relu" => {
                want(0)?;
                Activation::Relu
            }
            "Clip" => {
                want(2)?;
                Activation::Clip(params[0], params[1])
            }
            "HardSigmoid" => {
                want(2)?;
                Activation::HardSigmoid(params[0], params[1])
            }
            "HardSwish" => {
                want(0)?;
                Activation::HardSwish
            }
            "LeakyRelu" => {
                want(1)?;
                Activation::LeakyRelu(params[0])
            }
            "Sigmoid" => {
                want(0)?;
                Activation::Sigmoid
            }
            "Silu" => {
                want(0)?;
                Activation::Silu
            }
            "ErfGelu" => {
                want(3)?;
                Activation::ErfGelu(params[0], params[1], params[2])
            }
            other => bail!(
                "fused activation {other:?} is not supported (Relu, Clip, HardSigmoid, HardSwish, LeakyRelu, Sigmoid, Silu, ErfGelu are)"
            ),
        })
    }

    /// Whether each element's value is a long chain of dependent steps (`exp` or `erf`, a
    /// division): best applied to many elements in one loop, whose independent chains the CPU
    /// overlaps, than a vector at a time between other work.
    /// On a Cortex-M4F (one lane, in order) no chain overlaps another anyway: there this is
    /// false, and the activations stay with the sums (the code of the vector builds' separate
    /// pass cost the keyword spotter's firmware 1.2 KB of flash for nothing).
    pub(crate) fn is_chain(self) -> bool {
        cfg!(not(target_arch = "arm"))
            && matches!(
                self,
                Activation::Sigmoid | Activation::Silu | Activation::ErfGelu(..)
            )
    }

    /// The part of the activation a tile or block of sums takes in its registers: a chain
    /// activation none (it runs on the stored sums, many at once), the others all of it.
    pub(crate) fn in_registers(self) -> Activation {
        if self.is_chain() {
            Activation::None
        } else {
            self
        }
    }

    /// A chain activation ([`Activation::is_chain`]) on every element of `xs`; nothing for the
    /// others. Inlined into each x86-64 caller (its vector level); one shared copy on a
    /// microcontroller, where every inlined `apply` at each tile and plane cost flash.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    #[cfg_attr(not(target_arch = "x86_64"), inline(never))]
    pub(crate) fn apply_chain(self, xs: &mut [f32]) {
        match self {
            Activation::Sigmoid => sigmoid_all(xs),
            Activation::Silu => silu_all(xs),
            Activation::ErfGelu(divisor, addend, scale) => {
                erf_gelu_all(xs, divisor, addend, scale);
            }
            _ => {}
        }
    }

    /// Applies the activation to every element of `xs`. Plain `for` loops, not `for_each`
    /// with a closure: a long closure (Sigmoid's, ErfGelu's) left `for_each` out of line, built
    /// for the baseline instead of the AVX2 or AVX-512 function calling it (4 lanes, not 16).
    #[inline(always)]
    pub(crate) fn apply(self, xs: &mut [f32]) {
        match self {
            Activation::None => {}
            Activation::Relu => {
                for x in xs {
                    *x = relu(*x);
                }
            }
            Activation::Clip(lo, hi) => {
                for x in xs {
                    *x = clip(*x, lo, hi);
                }
            }
            Activation::HardSigmoid(alpha, beta) => {
                for x in xs {
                    *x = hard_sigmoid(*x, alpha, beta);
                }
            }
            Activation::HardSwish => {
                for x in xs {
                    *x = hard_swish(*x);
                }
            }
            Activation::LeakyRelu(alpha) => {
                for x in xs {
                    *x = leaky_relu(*x, alpha);
                }
            }
            Activation::Sigmoid => sigmoid_all(xs),
            Activation::Silu => silu_all(xs),
            Activation::ErfGelu(divisor, addend, scale) => {
                erf_gelu_all(xs, divisor, addend, scale);
            }
        }
    }
}

// The activations built on `exp`: inlined into each x86-64 caller, whose AVX2 or AVX-512 they
// then run with (an out-of-line function is built for the baseline, 4 lanes), and one shared
// copy elsewhere (a Cortex-M4F runs them a lane at a time either way, and each inlined copy is
// a few hundred bytes of flash at every product and Conv method that applies an activation).

/// Sigmoid on every element.
#[cfg_attr(target_arch = "x86_64", inline(always))]
#[cfg_attr(not(target_arch = "x86_64"), inline(never))]
fn sigmoid_all(xs: &mut [f32]) {
    for x in xs {
        *x = crate::fast_math::logistic(*x);
    }
}

/// SiLU on every element: `x * sigmoid(x)`.
#[cfg_attr(target_arch = "x86_64", inline(always))]
#[cfg_attr(not(target_arch = "x86_64"), inline(never))]
fn silu_all(xs: &mut [f32]) {
    for x in xs {
        *x *= crate::fast_math::logistic(*x);
    }
}

/// ErfGelu on every element.
#[cfg_attr(target_arch = "x86_64", inline(always))]
#[cfg_attr(not(target_arch = "x86_64"), inline(never))]
fn erf_gelu_all(xs: &mut [f32], divisor: f32, addend: f32, scale: f32) {
    for x in xs {
        *x = erf_gelu(*x, divisor, addend, scale);
    }
}

/// Relu, as the `Relu` kernel.
#[inline(always)]
pub(crate) fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// Clip, as the `Clip` kernel: max then min (when min > max every element becomes max).
#[inline(always)]
pub(crate) fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let y = if x < lo { lo } else { x };
    if y > hi { hi } else { y }
}

/// HardSigmoid, as the `HardSigmoid` kernel.
#[inline(always)]
pub(crate) fn hard_sigmoid(x: f32, alpha: f32, beta: f32) -> f32 {
    (alpha * x + beta).clamp(0.0, 1.0)
}

/// HardSwish, as the `HardSwish` kernel (alpha 1/6, beta 1/2).
#[inline(always)]
pub(crate) fn hard_swish(x: f32) -> f32 {
    x * (1.0f32 / 6.0 * x + 0.5).clamp(0.0, 1.0)
}

/// GELU as PyTorch exports it, as its nodes compute it: `Div` (`x / divisor`), `Erf`
/// ([`crate::fast_math::erf`], as the `Erf` kernel), `Add` (`+ addend`), `Mul` by `x`, `Mul` by
/// `scale`, each rounded as the standalone kernel rounds it (f32 addition and multiplication are
/// commutative, so either operand order of the file's nodes gives these bits).
#[inline(always)]
pub(crate) fn erf_gelu(x: f32, divisor: f32, addend: f32, scale: f32) -> f32 {
    (x * (crate::fast_math::erf(x / divisor) + addend)) * scale
}

/// LeakyRelu, as the `LeakyRelu` kernel.
#[inline(always)]
pub(crate) fn leaky_relu(x: f32, alpha: f32) -> f32 {
    if x < 0.0 { alpha * x } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Attr, Data, DataMut, Input, Output, run};

    /// Every fused activation computes the bits of its standalone kernel, special values
    /// included.
    #[test]
    #[allow(clippy::type_complexity)]
    fn fused_activations_match_the_standalone_kernels() {
        let mut xs: std::vec::Vec<f32> = (-2000..2000).map(|i| i as f32 * 0.00731).collect();
        xs.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            -3.0,
            3.0,
        ]);
        let cases: [(&str, &[(&str, Attr<'_>)], Activation); 6] = [
            ("Relu", &[], Activation::Relu),
            ("Sigmoid", &[], Activation::Sigmoid),
            (
                "HardSigmoid",
                &[("alpha", Attr::Float(0.3)), ("beta", Attr::Float(0.4))],
                Activation::HardSigmoid(0.3, 0.4),
            ),
            ("HardSwish", &[], Activation::HardSwish),
            (
                "LeakyRelu",
                &[("alpha", Attr::Float(0.1))],
                Activation::LeakyRelu(0.1),
            ),
            (
                "Clip",
                &[("min", Attr::Float(-1.5)), ("max", Attr::Float(6.0))],
                Activation::Clip(-1.5, 6.0),
            ),
        ];
        let shape = [xs.len()];
        for (op, attrs, act) in cases {
            let mut want = std::vec![0.0f32; xs.len()];
            let inputs = [Input::Value {
                shape: &shape,
                data: Data::F32(&xs),
            }];
            let mut outputs = [Output {
                shape: &shape,
                data: DataMut::F32(&mut want),
            }];
            run(op, &Attrs::new(attrs), &inputs, &mut outputs, &mut []).unwrap();
            let mut got = xs.clone();
            act.apply(&mut got);
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.to_bits(), w.to_bits(), "{op}");
            }
        }
    }

    /// The standalone kernel `op` on `a` (and `b`, a scalar if it has one element, else of
    /// `a`'s shape): its output.
    fn run_kernel(op: &str, a: &[f32], b: Option<&[f32]>) -> std::vec::Vec<f32> {
        let shape = [a.len()];
        let b_shape: &[usize] = match b {
            Some(b) if b.len() == 1 => &[],
            _ => &shape,
        };
        let mut out = std::vec![0.0f32; a.len()];
        let mut inputs = std::vec![Input::Value {
            shape: &shape,
            data: Data::F32(a),
        }];
        if let Some(b) = b {
            inputs.push(Input::Value {
                shape: b_shape,
                data: Data::F32(b),
            });
        }
        let mut outputs = [Output {
            shape: &shape,
            data: DataMut::F32(&mut out),
        }];
        run(op, &Attrs::default(), &inputs, &mut outputs, &mut []).unwrap();
        out
    }

    /// `ErfGelu` is the five kernels PyTorch's GELU is exported as (`Div`, `Erf`, `Add`, `Mul`
    /// by the input, `Mul`), run one after the other, bit for bit.
    #[test]
    fn erf_gelu_is_its_five_nodes() {
        let mut xs: std::vec::Vec<f32> = (-3000..3000).map(|i| i as f32 * 0.00377).collect();
        xs.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-40,
            9.5,
            -9.5,
        ]);
        let (divisor, addend, scale) = (core::f32::consts::SQRT_2, 1.0f32, 0.5f32);
        let d = run_kernel("Div", &xs, Some(&[divisor]));
        let e = run_kernel("Erf", &d, None);
        let a = run_kernel("Add", &e, Some(&[addend]));
        let m = run_kernel("Mul", &xs, Some(&a));
        let want = run_kernel("Mul", &m, Some(&[scale]));
        let mut got = xs.clone();
        Activation::ErfGelu(divisor, addend, scale).apply(&mut got);
        for ((g, w), x) in got.iter().zip(&want).zip(&xs) {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "ErfGelu({x:e}) = {g:e}, the nodes {w:e}"
            );
        }
    }

    /// `Silu` is the two kernels PyTorch's SiLU is exported as (`Sigmoid`, then `Mul` by the
    /// input, in either order), run one after the other, bit for bit.
    #[test]
    fn silu_is_sigmoid_then_mul() {
        let mut xs: std::vec::Vec<f32> = (-3000..3000).map(|i| i as f32 * 0.0377).collect();
        xs.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-40,
            -90.0,
            -104.5,
        ]);
        let s = run_kernel("Sigmoid", &xs, None);
        let mut got = xs.clone();
        Activation::Silu.apply(&mut got);
        for want in [
            run_kernel("Mul", &xs, Some(&s)),
            run_kernel("Mul", &s, Some(&xs)),
        ] {
            for ((g, w), x) in got.iter().zip(&want).zip(&xs) {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "Silu({x:e}) = {g:e}, the nodes {w:e}"
                );
            }
        }
    }

    #[test]
    fn the_attributes_name_the_activation() {
        let attrs = [
            ("activation", Attr::Str("Clip")),
            ("activation_params", Attr::Floats(&[0.0, 6.0])),
        ];
        assert_eq!(
            Activation::from_attrs(&Attrs::new(&attrs)).unwrap(),
            Activation::Clip(0.0, 6.0)
        );
        assert_eq!(
            Activation::from_attrs(&Attrs::default()).unwrap(),
            Activation::None
        );
        let bad = [("activation", Attr::Str("Clip"))];
        assert!(Activation::from_attrs(&Attrs::new(&bad)).is_err());
        let unknown = [("activation", Attr::Str("Gelu"))];
        assert!(Activation::from_attrs(&Attrs::new(&unknown)).is_err());
    }
}
