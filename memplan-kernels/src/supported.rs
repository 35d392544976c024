//! Which ONNX operators (and attribute values) the kernels implement, checkable without the
//! kernels themselves.
//!
//! A build step (`memplan-build`) calls [`check_node`] on every node and rejects a model with an
//! unsupported node at build time, naming it, instead of failing at run time.

use crate::error::{KernelError, bail};

/// The supported `op_type`s of the default ONNX domain, sorted.
pub const SUPPORTED_OPS: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "AveragePool",
    "BatchNormalization",
    "Cast",
    "Ceil",
    "Celu",
    "Clip",
    "Concat",
    "ConstantOfShape",
    "Conv",
    "ConvInteger",
    "ConvTranspose",
    "Cos",
    "Cosh",
    "CumSum",
    "DepthToSpace",
    "DequantizeLinear",
    "Div",
    "Dropout",
    "DynamicQuantizeLinear",
    "Einsum",
    "Elu",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "Flatten",
    "Floor",
    "GRU",
    "Gather",
    "GatherElements",
    "Gelu",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Greater",
    "GreaterOrEqual",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "InstanceNormalization",
    "IsInf",
    "IsNaN",
    "LRN",
    "LSTM",
    "LayerNormalization",
    "LeakyRelu",
    "Less",
    "LessOrEqual",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "MatMul",
    "MatMulInteger",
    "Max",
    "MaxPool",
    "Mean",
    "Min",
    "Mish",
    "Mod",
    "Mul",
    "Neg",
    "Not",
    "OneHot",
    "Or",
    "PRelu",
    "Pad",
    "Pow",
    "QLinearConv",
    "QLinearMatMul",
    "QuantizeLinear",
    "RNN",
    "Range",
    "Reciprocal",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Relu",
    "Reshape",
    "Resize",
    "Round",
    "ScatterElements",
    "ScatterND",
    "Selu",
    "Shape",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Size",
    "Slice",
    "Softmax",
    "Softplus",
    "Softsign",
    "SpaceToDepth",
    "Split",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Tile",
    "TopK",
    "Transpose",
    "Trilu",
    "Unsqueeze",
    "Upsample",
    "Where",
    "Xor",
];

/// The supported `op_type`s of the `com.microsoft` domain (ONNX Runtime's contrib operators that
/// its quantiser writes), sorted. Their names are not those of any default-domain operator.
pub const SUPPORTED_MICROSOFT_OPS: &[&str] = &[
    "QGemm",
    "QLinearAdd",
    "QLinearGlobalAveragePool",
    "QLinearMul",
];

/// Strings written with `, ` between them.
struct Joined<'a>(&'a [&'a str]);

impl core::fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(s)?;
        }
        Ok(())
    }
}

/// Checks one node at build time: `Err(reason)` if its `op_type` is not supported or one of its
/// int or string attributes has a value the kernels do not implement. Attributes not listed
/// keep their ONNX defaults. Passing this check does not guarantee that the shapes fit: the
/// kernels still check them when running, and return an error rather than a wrong answer.
pub fn check_node(
    op_type: &str,
    int_attrs: &[(&str, i64)],
    str_attrs: &[(&str, &str)],
) -> Result<(), KernelError> {
    if op_type.starts_with("tflite.") {
        if crate::tflite::OPERATORS.binary_search(&op_type).is_err() {
            bail!("TFLite operator {op_type:?} is not supported");
        }
        return Ok(());
    }
    if SUPPORTED_OPS.binary_search(&op_type).is_err()
        && SUPPORTED_MICROSOFT_OPS.binary_search(&op_type).is_err()
    {
        bail!("operator type {op_type:?} is not supported");
    }
    let int = |name: &str| int_attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let text = |name: &str| str_attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let one_of = |name: &str, allowed: &[&str]| match text(name) {
        Some(v) if !allowed.contains(&v) => Err(crate::error::error!(
            "{op_type}: {name} {v:?} is not supported (supported: {})",
            Joined(allowed)
        )),
        _ => Ok(()),
    };
    let must_be = |name: &str, allowed: &[i64]| match int(name) {
        Some(v) if !allowed.contains(&v) => Err(crate::error::error!(
            "{op_type}: {name} = {v} is not supported (supported: {allowed:?})"
        )),
        _ => Ok(()),
    };
    match op_type {
        "LSTM" | "GRU" | "RNN" => {
            one_of("direction", &["forward", "reverse", "bidirectional"])?;
            must_be("layout", &[0, 1])?;
            must_be("input_forget", &[0])?;
        }
        "Conv" | "ConvTranspose" | "MaxPool" | "AveragePool" | "QLinearConv" | "ConvInteger" => {
            one_of("auto_pad", &["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])?;
            if op_type == "MaxPool" {
                must_be("storage_order", &[0])?;
            }
            if let Some(g) = int("group")
                && g < 1
            {
                bail!("{op_type}: group {g} must be positive");
            }
        }
        "Resize" => {
            one_of("mode", &["nearest", "linear"])?;
            let linear = text("mode") == Some("linear");
            if linear {
                one_of(
                    "coordinate_transformation_mode",
                    &[
                        "half_pixel",
                        "pytorch_half_pixel",
                        "align_corners",
                        "asymmetric",
                    ],
                )?;
            } else {
                one_of(
                    "coordinate_transformation_mode",
                    &[
                        "half_pixel",
                        "pytorch_half_pixel",
                        "align_corners",
                        "asymmetric",
                        "tf_half_pixel_for_nn",
                    ],
                )?;
            }
            one_of(
                "nearest_mode",
                &["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
            )?;
            one_of("keep_aspect_ratio_policy", &["stretch"])?;
            must_be("exclude_outside", &[0])?;
            must_be("antialias", &[0])?;
        }
        "Cast" => match int("to") {
            Some(1 | 6 | 7 | 9) => {}
            Some(t) => {
                bail!("Cast: to = {t} is not supported (1 float, 6 int32, 7 int64, 9 bool are)");
            }
            None => bail!("Cast: attribute `to` is required"),
        },
        "BatchNormalization" => {
            must_be("training_mode", &[0])?;
            must_be("spatial", &[1])?;
        }
        "Upsample" => one_of("mode", &["nearest", "linear"])?,
        "TopK" => must_be("sorted", &[1])?,
        "LpNormalization" => must_be("p", &[1, 2])?,
        "ScatterND" | "ScatterElements" => {
            one_of("reduction", &["none", "add", "mul", "max", "min"])?
        }
        "Gelu" => one_of("approximate", &["none", "tanh"])?,
        "DepthToSpace" => one_of("mode", &["DCR", "CRD"])?,
        "Pad" => one_of("mode", &["constant", "edge", "reflect", "wrap"])?,
        "LayerNormalization" => must_be("stash_type", &[1])?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_without_repeats() {
        assert!(SUPPORTED_OPS.windows(2).all(|w| w[0] < w[1]));
        assert!(SUPPORTED_MICROSOFT_OPS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn unsupported_ops_and_attribute_values_are_rejected() {
        assert!(check_node("Conv", &[("group", 32)], &[("auto_pad", "SAME_UPPER")]).is_ok());
        assert!(check_node("Conv", &[("group", 0)], &[]).is_err());
        assert!(check_node("Conv", &[], &[("auto_pad", "SAME")]).is_err());
        assert!(
            check_node("Loop", &[], &[])
                .unwrap_err()
                .message()
                .contains("Loop")
        );
        assert!(check_node("LSTM", &[("layout", 1)], &[("direction", "reverse")]).is_ok());
        assert!(check_node("GRU", &[("input_forget", 1)], &[]).is_err());
        assert!(check_node("RNN", &[], &[("direction", "both")]).is_err());
        assert!(check_node("Resize", &[], &[("mode", "cubic")]).is_err());
        assert!(
            check_node(
                "Resize",
                &[],
                &[
                    ("mode", "linear"),
                    ("coordinate_transformation_mode", "tf_half_pixel_for_nn")
                ]
            )
            .is_err()
        );
        assert!(
            check_node(
                "Resize",
                &[],
                &[
                    ("mode", "nearest"),
                    ("coordinate_transformation_mode", "tf_half_pixel_for_nn")
                ]
            )
            .is_ok()
        );
        assert!(check_node("Resize", &[("antialias", 1)], &[]).is_err());
        assert!(
            check_node(
                "Resize",
                &[],
                &[("coordinate_transformation_mode", "tf_crop_and_resize")]
            )
            .is_err()
        );
        assert!(check_node("Cast", &[("to", 7)], &[]).is_ok());
        assert!(check_node("Cast", &[("to", 10)], &[]).is_err());
        assert!(check_node("Cast", &[], &[]).is_err());
        assert!(check_node("BatchNormalization", &[("training_mode", 1)], &[]).is_err());
        assert!(check_node("MaxPool", &[("storage_order", 1)], &[]).is_err());
        assert!(check_node("Softmax", &[("axis", 1)], &[]).is_ok());
    }
}
