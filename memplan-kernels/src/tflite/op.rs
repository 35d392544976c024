//! One function per `tflite.*` operator, for code that knows a node's operator at build time:
//! `memplan-build`'s generated `run` calls `op::conv_2d(..)` rather than
//! `memplan_kernels::run("tflite.CONV_2D", ..)`, so a firmware links the kernels its network
//! uses and no others. Each checks its views as [`crate::run`] does and names its operator in
//! an error; [`kernel`] is the same table by name, for [`crate::run`].

use super::Binary;
use crate::attrs::Attrs;
use crate::error::KernelError;
use crate::tensor::{Input, Output, check_views};

macro_rules! operators {
    ($($function:ident $name:literal => |$attrs:ident, $inputs:ident, $outputs:ident| $kernel:expr;)*) => {
        $(
            #[doc = concat!("`tflite.", $name, "`: its views checked, then its kernel.")]
            ///
            /// # Errors
            /// Views that do not fit the operator, or what its kernel refuses.
            pub fn $function(
                attrs: &Attrs<'_>,
                inputs: &[Input<'_>],
                outputs: &mut [Output<'_>],
            ) -> Result<(), KernelError> {
                let ($attrs, $inputs, $outputs) = (attrs, inputs, outputs);
                check_views($inputs, $outputs)
                    .and_then(|()| $kernel)
                    .map_err(|e| e.context(concat!("tflite.", $name)))
            }
        )*

        /// The kernel of the builtin `name` (without the `tflite.` prefix), views unchecked.
        pub(crate) fn kernel(
            name: &str,
            attrs: &Attrs<'_>,
            inputs: &[Input<'_>],
            outputs: &mut [Output<'_>],
        ) -> Result<(), KernelError> {
            match name {
                $($name => {
                    let ($attrs, $inputs, $outputs) = (attrs, inputs, outputs);
                    $kernel
                })*
                _ => Err(KernelError::new("TFLite operator not supported")),
            }
        }
    };
}

operators! {
    conv_2d "CONV_2D" => |a, i, o| super::conv(a, i, o, false);
    depthwise_conv_2d "DEPTHWISE_CONV_2D" => |a, i, o| super::conv(a, i, o, true);
    fully_connected "FULLY_CONNECTED" => |a, i, o| super::fully_connected(a, i, o);
    average_pool_2d "AVERAGE_POOL_2D" => |a, i, o| super::pool(a, i, o, false);
    max_pool_2d "MAX_POOL_2D" => |a, i, o| super::pool(a, i, o, true);
    softmax "SOFTMAX" => |a, i, o| super::softmax(a, i, o);
    add "ADD" => |a, i, o| super::binary(a, i, o, Binary::Add);
    sub "SUB" => |a, i, o| super::binary(a, i, o, Binary::Sub);
    mul "MUL" => |a, i, o| super::binary(a, i, o, Binary::Mul);
    logistic "LOGISTIC" => |_a, i, o| super::lut_or(i, o, |x| 1.0 / (1.0 + libm::expf(-x)));
    tanh "TANH" => |_a, i, o| super::lut_or(i, o, libm::tanhf);
    quantize "QUANTIZE" => |a, i, o| super::quantize(a, i, o);
    dequantize "DEQUANTIZE" => |a, i, o| super::dequantize(a, i, o);
    reshape "RESHAPE" => |_a, i, o| super::reshape(i, o);
    concatenation "CONCATENATION" => |a, i, o| crate::concat_split::concat(a, i, o);
    pad "PAD" => |a, i, o| super::pad(a, i, o);
    mean "MEAN" => |a, i, o| super::mean(a, i, o);
    relu "RELU" => |a, i, o| super::relu(a, i, o);
    strided_slice "STRIDED_SLICE" => |a, i, o| super::strided_slice(a, i, o);
    batch_matmul "BATCH_MATMUL" => |a, i, o| super::batch_matmul(a, i, o);
}
