//! One function per ONNX operator, for code that knows a node's operator at build time:
//! `memplan-build`'s generated `run` calls `op::conv(..)` rather than `memplan_kernels::run("Conv",
//! ..)`, so a firmware links the kernels its network uses and not the interpreter's table of
//! every kernel. The elementwise, reshape-like and reduction operators come in families
//! ([`unary`], [`binary`], [`reshape`], [`reduce`]) that take the operator's name: one family is
//! linked whole. Each function checks its views as [`crate::run`] does and names its operator in
//! an error; [`function`] tells the build which function runs an operator; [`kernel`] is the
//! same table by name, for [`crate::run`].

use crate::attrs::Attrs;
use crate::error::KernelError;
use crate::tensor::{Data, Input, Output, check_views};
use crate::{
    binary as binary_ops, cast, concat_split, conv, conv_transpose, cumsum, einsum, expand, gather,
    generate, matmul, normalization, pad, pool, qdq, qlinear, recurrent, reduce as reduce_ops,
    reshape as reshape_ops, resize, scatter, slice, space_depth, tile, topk, transpose, trilu,
    unary as unary_ops,
};

macro_rules! operators {
    ($($function:ident $name:literal => |$attrs:ident, $inputs:ident, $outputs:ident, $scratch:ident| $kernel:expr;)*) => {
        $(
            #[doc = concat!("`", $name, "`: its views checked, then its kernel.")]
            ///
            /// # Errors
            /// Views that do not fit the operator, or what its kernel refuses.
            #[allow(unused_variables)] // not every kernel reads its attributes or scratch
            pub fn $function(
                attrs: &Attrs<'_>,
                inputs: &[Input<'_>],
                outputs: &mut [Output<'_>],
                scratch: &mut [u64],
            ) -> Result<(), KernelError> {
                let ($attrs, $inputs, $outputs, $scratch) = (attrs, inputs, outputs, scratch);
                check_views($inputs, $outputs)
                    .and_then(|()| $kernel)
                    .map_err(|e| e.context($name))
            }
        )*

        /// The function of each operator of this table: `(operator, function)`.
        const FUNCTIONS: &[(&str, &str)] = &[$(($name, stringify!($function)),)*];

        /// The kernel of operator `name`, views unchecked.
        #[allow(unused_variables)]
        pub(crate) fn kernel(
            name: &str,
            attrs: &Attrs<'_>,
            inputs: &[Input<'_>],
            outputs: &mut [Output<'_>],
            scratch: &mut [u64],
        ) -> Result<(), KernelError> {
            if let Some(r) = family(name, attrs, inputs, outputs) {
                return r;
            }
            match name {
                $($name => {
                    let ($attrs, $inputs, $outputs, $scratch) = (attrs, inputs, outputs, scratch);
                    $kernel
                })*
                _ => Err(KernelError::new("operator type not supported")),
            }
        }
    };
}

/// The families' kernels, by name: `None` for an operator of none of them.
fn family(
    name: &str,
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Option<Result<(), KernelError>> {
    unary_ops::run(name, attrs, inputs, outputs)
        .or_else(|| binary_ops::run(name, attrs, inputs, outputs))
        .or_else(|| reshape_ops::run(name, attrs, inputs, outputs))
        .or_else(|| reduce_ops::run(name, attrs, inputs, outputs))
}

macro_rules! families {
    ($($function:ident => $module:ident, $what:literal;)*) => {
        $(
            #[doc = concat!("The ", $what, " operator `op_type`: its views checked, then its kernel.")]
            ///
            /// # Errors
            /// An operator of another family, views that do not fit it, or what its kernel
            /// refuses.
            pub fn $function(
                op_type: &str,
                attrs: &Attrs<'_>,
                inputs: &[Input<'_>],
                outputs: &mut [Output<'_>],
            ) -> Result<(), KernelError> {
                check_views(inputs, outputs)
                    .and_then(|()| {
                        $module::run(op_type, attrs, inputs, outputs).unwrap_or_else(|| {
                            Err(KernelError::new(concat!("not a ", $what, " operator")))
                        })
                    })
                    .map_err(|e| e.context(op_type))
            }
        )*

        /// The family of `op_type`, if it is in one: the function's name.
        fn family_of(op_type: &str) -> Option<&'static str> {
            // A family's `run` answers `None` for another family's operator before it reads
            // its operands (tested for every supported operator below).
            let mut none: [Output<'_>; 0] = [];
            $(
                if $module::run(op_type, &Attrs::new(&[]), &[], &mut none).is_some() {
                    return Some(stringify!($function));
                }
            )*
            None
        }
    };
}

families! {
    unary => unary_ops, "elementwise unary";
    binary => binary_ops, "elementwise binary";
    reshape => reshape_ops, "reshape-like";
    reduce => reduce_ops, "reduction";
}

/// The function of this module that runs ONNX operator `op_type`, and whether it takes the
/// operator's name (a family); `None` for one it does not hold.
#[must_use]
pub fn function(op_type: &str) -> Option<(&'static str, bool)> {
    if op_type.starts_with("tflite.") {
        return None;
    }
    if let Some(f) = family_of(op_type) {
        return Some((f, true));
    }
    FUNCTIONS
        .iter()
        .find(|(name, _)| *name == op_type)
        .map(|&(_, f)| (f, false))
}

operators! {
    average_pool "AveragePool" => |attrs, inputs, outputs, scratch| pool::pool(attrs, inputs, outputs, false);
    batch_normalization "BatchNormalization" => |attrs, inputs, outputs, scratch| normalization::batch_norm(attrs, inputs, outputs);
    cast "Cast" => |attrs, inputs, outputs, scratch| cast::cast(attrs, inputs, outputs);
    concat "Concat" => |attrs, inputs, outputs, scratch| concat_split::concat(attrs, inputs, outputs);
    constant_of_shape "ConstantOfShape" => |attrs, inputs, outputs, scratch| generate::constant_of_shape(attrs, inputs, outputs);
    conv "Conv" => |attrs, inputs, outputs, scratch| conv::conv(attrs, inputs, outputs, scratch);
    conv_integer "ConvInteger" => |attrs, inputs, outputs, scratch| qlinear::conv_integer(attrs, inputs, outputs);
    conv_transpose "ConvTranspose" => |attrs, inputs, outputs, scratch| conv_transpose::conv_transpose(attrs, inputs, outputs, scratch);
    cum_sum "CumSum" => |attrs, inputs, outputs, scratch| cumsum::cumsum(attrs, inputs, outputs);
    depth_to_space "DepthToSpace" => |attrs, inputs, outputs, scratch| space_depth::space_depth(attrs, inputs, outputs, true);
    dequantize_linear "DequantizeLinear" => |attrs, inputs, outputs, scratch| qdq::dequantize(attrs, inputs, outputs);
    dynamic_quantize_linear "DynamicQuantizeLinear" => |attrs, inputs, outputs, scratch| qlinear::dynamic_quantize(inputs, outputs);
    einsum "Einsum" => |attrs, inputs, outputs, scratch| einsum::einsum(attrs, inputs, outputs, scratch);
    expand "Expand" => |attrs, inputs, outputs, scratch| expand::expand(inputs, outputs);
    gather "Gather" => |attrs, inputs, outputs, scratch| gather::gather(attrs, inputs, outputs);
    gather_elements "GatherElements" => |attrs, inputs, outputs, scratch| gather::gather_elements(attrs, inputs, outputs);
    gemm "Gemm" => |attrs, inputs, outputs, scratch| matmul::gemm(attrs, inputs, outputs, scratch);
    gru "GRU" => |attrs, inputs, outputs, scratch| recurrent::run(recurrent::Cell::Gru, attrs, inputs, outputs, scratch);
    lstm "LSTM" => |attrs, inputs, outputs, scratch| recurrent::run(recurrent::Cell::Lstm, attrs, inputs, outputs, scratch);
    rnn "RNN" => |attrs, inputs, outputs, scratch| recurrent::run(recurrent::Cell::Rnn, attrs, inputs, outputs, scratch);
    global_average_pool "GlobalAveragePool" => |attrs, inputs, outputs, scratch| pool::global(inputs, outputs, false);
    global_max_pool "GlobalMaxPool" => |attrs, inputs, outputs, scratch| pool::global(inputs, outputs, true);
    hardmax "Hardmax" => |attrs, inputs, outputs, scratch| topk::hardmax(attrs, inputs, outputs);
    instance_normalization "InstanceNormalization" => |attrs, inputs, outputs, scratch| normalization::instance_norm(attrs, inputs, outputs);
    is_inf "IsInf" => |attrs, inputs, outputs, scratch| unary_ops::classify(attrs, inputs, outputs, false);
    is_nan "IsNaN" => |attrs, inputs, outputs, scratch| unary_ops::classify(attrs, inputs, outputs, true);
    lrn "LRN" => |attrs, inputs, outputs, scratch| normalization::lrn(attrs, inputs, outputs);
    layer_normalization "LayerNormalization" => |attrs, inputs, outputs, scratch| normalization::layer_norm(attrs, inputs, outputs);
    log_softmax "LogSoftmax" => |attrs, inputs, outputs, scratch| normalization::softmax(attrs, inputs, outputs, true);
    lp_normalization "LpNormalization" => |attrs, inputs, outputs, scratch| normalization::lp_norm(attrs, inputs, outputs);
    mat_mul "MatMul" => |attrs, inputs, outputs, scratch| matmul::matmul(attrs, inputs, outputs, scratch);
    mat_mul_integer "MatMulInteger" => |attrs, inputs, outputs, scratch| qlinear::matmul_integer(inputs, outputs);
    max_pool "MaxPool" => |attrs, inputs, outputs, scratch| match inputs.first() {
                Some(Input::Value {
                    data: Data::I8(_) | Data::U8(_),
                    ..
                }) => qlinear::max_pool(attrs, inputs, outputs),
                _ => pool::pool(attrs, inputs, outputs, true),
            };
    one_hot "OneHot" => |attrs, inputs, outputs, scratch| topk::one_hot(attrs, inputs, outputs);
    pad "Pad" => |attrs, inputs, outputs, scratch| pad::pad(attrs, inputs, outputs);
    q_gemm "QGemm" => |attrs, inputs, outputs, scratch| qlinear::qgemm(attrs, inputs, outputs);
    q_linear_add "QLinearAdd" => |attrs, inputs, outputs, scratch| qlinear::qlinear_binary(inputs, outputs, false);
    q_linear_conv "QLinearConv" => |attrs, inputs, outputs, scratch| qlinear::qlinear_conv(attrs, inputs, outputs);
    q_linear_global_average_pool "QLinearGlobalAveragePool" => |attrs, inputs, outputs, scratch| qlinear::qlinear_global_average_pool(attrs, inputs, outputs);
    q_linear_mat_mul "QLinearMatMul" => |attrs, inputs, outputs, scratch| qlinear::qlinear_matmul(inputs, outputs);
    q_linear_mul "QLinearMul" => |attrs, inputs, outputs, scratch| qlinear::qlinear_binary(inputs, outputs, true);
    quantize_linear "QuantizeLinear" => |attrs, inputs, outputs, scratch| qdq::quantize(attrs, inputs, outputs);
    range "Range" => |attrs, inputs, outputs, scratch| generate::range(inputs, outputs);
    resize "Resize" => |attrs, inputs, outputs, scratch| resize::resize(attrs, inputs, outputs, scratch);
    scatter_elements "ScatterElements" => |attrs, inputs, outputs, scratch| scatter::scatter_elements(attrs, inputs, outputs);
    scatter_nd "ScatterND" => |attrs, inputs, outputs, scratch| scatter::scatter_nd(attrs, inputs, outputs);
    shape "Shape" => |attrs, inputs, outputs, scratch| generate::shape(attrs, inputs, outputs);
    size "Size" => |attrs, inputs, outputs, scratch| generate::size(inputs, outputs);
    slice "Slice" => |attrs, inputs, outputs, scratch| slice::slice(attrs, inputs, outputs);
    softmax "Softmax" => |attrs, inputs, outputs, scratch| normalization::softmax(attrs, inputs, outputs, false);
    space_to_depth "SpaceToDepth" => |attrs, inputs, outputs, scratch| space_depth::space_depth(attrs, inputs, outputs, false);
    split "Split" => |attrs, inputs, outputs, scratch| concat_split::split(attrs, inputs, outputs);
    tile "Tile" => |attrs, inputs, outputs, scratch| tile::tile(inputs, outputs);
    top_k "TopK" => |attrs, inputs, outputs, scratch| topk::topk(attrs, inputs, outputs, scratch);
    transpose "Transpose" => |attrs, inputs, outputs, scratch| transpose::transpose(attrs, inputs, outputs);
    trilu "Trilu" => |attrs, inputs, outputs, scratch| trilu::trilu(attrs, inputs, outputs);
    upsample "Upsample" => |attrs, inputs, outputs, scratch| resize::upsample(attrs, inputs, outputs, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_operator_has_its_function() {
        for &op in crate::supported::SUPPORTED_OPS {
            assert!(function(op).is_some(), "{op}");
        }
        assert_eq!(function("Conv"), Some(("conv", false)));
        assert_eq!(function("Relu"), Some(("unary", true)));
        assert_eq!(function("Add"), Some(("binary", true)));
        assert_eq!(function("Reshape"), Some(("reshape", true)));
        assert_eq!(function("ReduceMean"), Some(("reduce", true)));
        assert_eq!(function("tflite.CONV_2D"), None);
        assert_eq!(function("NoSuchOp"), None);
    }
}
