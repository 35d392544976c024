//! Tests of shape inference: the tricky rules one by one, every ONNX Runtime kernel case of
//! `memplan-kernels` (a node, its inputs, and the output shapes and types ONNX Runtime computed),
//! and every ONNX model of `../shared/bench` and of the repository's fixtures imported without
//! its `value_info`, which must give the same model file, tensors, weights and plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use memplan_core::model_plan::plan_model;
use prost::Message;
use serde_json::Value;

use super::node::{FLOAT, broadcast};
use super::*;
use crate::proto::*;
use crate::{ImportOptions, import};

fn info(elem_type: i32, dims: &[u64]) -> Info {
    Info::new(elem_type, dims.to_vec())
}

fn node(op: &str, inputs: usize, attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: (0..inputs).map(|k| format!("in{k}")).collect(),
        output: vec!["out0".into(), "out1".into()],
        name: format!("/{op}"),
        op_type: op.into(),
        domain: String::new(),
        attribute: attrs,
    }
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 7,
        ints: v.to_vec(),
        ..AttributeProto::default()
    }
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 2,
        i: v,
        ..AttributeProto::default()
    }
}

fn text(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 3,
        s: v.as_bytes().to_vec(),
        ..AttributeProto::default()
    }
}

/// The first output's shape of `node` over `ins`, or the error.
fn shape_of(node: &NodeProto, ins: &[Option<Info>]) -> Result<Vec<u64>, String> {
    let refs: Vec<Option<&Info>> = ins.iter().map(Option::as_ref).collect();
    let context = Node {
        node,
        ins: &refs,
        opset: 17,
        base_dir: Path::new("."),
    };
    context.infer()?.remove(0).map(|i| i.dims)
}

fn const_ints(v: &[i64]) -> Info {
    info(INT64, &[v.len() as u64]).with_value(Some(Values::Int(v.to_vec())))
}

#[test]
fn broadcasting_is_numpy_s() {
    assert_eq!(broadcast(&[&[2, 1, 4], &[3, 1]]).unwrap(), [2, 3, 4]);
    assert_eq!(broadcast(&[&[], &[5]]).unwrap(), [5]);
    assert_eq!(broadcast(&[&[1], &[1, 1, 7], &[6, 1]]).unwrap(), [1, 6, 7]);
    let error = broadcast(&[&[2, 3], &[4, 3]]).unwrap_err();
    assert!(error.contains("do not broadcast"), "{error}");
    let add = node("Add", 2, vec![]);
    assert_eq!(
        shape_of(
            &add,
            &[Some(info(1, &[8, 1, 6, 1])), Some(info(1, &[7, 1, 5]))]
        )
        .unwrap(),
        [8, 7, 6, 5]
    );
    // Shape arithmetic is computed: [2, 3] * 2 + 1.
    let mul = node("Mul", 2, vec![]);
    let refs = [Some(const_ints(&[2, 3])), Some(const_ints(&[2]))];
    let refs: Vec<Option<&Info>> = refs.iter().map(Option::as_ref).collect();
    let out = Node {
        node: &mul,
        ins: &refs,
        opset: 17,
        base_dir: Path::new("."),
    }
    .infer()
    .unwrap()
    .remove(0)
    .unwrap();
    assert_eq!(out.value, Some(Values::Int(vec![4, 6])));
}

#[test]
fn conv_and_pool_windows() {
    let x = info(1, &[1, 3, 7, 8]);
    let w = info(1, &[4, 3, 3, 3]);
    let conv = |attrs| shape_of(&node("Conv", 2, attrs), &[Some(x.clone()), Some(w.clone())]);
    assert_eq!(conv(vec![]).unwrap(), [1, 4, 5, 6]);
    assert_eq!(
        conv(vec![ints("pads", &[1, 1, 1, 1]), ints("strides", &[2, 2])]).unwrap(),
        [1, 4, 4, 4]
    );
    assert_eq!(
        conv(vec![
            ints("dilations", &[2, 2]),
            ints("pads", &[2, 2, 2, 2])
        ])
        .unwrap(),
        [1, 4, 7, 8]
    );
    // SAME: ceil(in / stride) whatever the kernel; VALID: no padding.
    for pad in ["SAME_UPPER", "SAME_LOWER"] {
        assert_eq!(
            conv(vec![text("auto_pad", pad), ints("strides", &[2, 3])]).unwrap(),
            [1, 4, 4, 3]
        );
    }
    assert_eq!(
        conv(vec![text("auto_pad", "VALID"), ints("strides", &[2, 3])]).unwrap(),
        [1, 4, 3, 2]
    );
    let error = conv(vec![text("auto_pad", "SAME")]).unwrap_err();
    assert!(error.contains("auto_pad \"SAME\""), "{error}");

    let pool = |n: u64, attrs: Vec<AttributeProto>| {
        shape_of(&node("MaxPool", 1, attrs), &[Some(info(1, &[1, 1, n, n]))])
    };
    // (6 - 3) / 2 = 1.5: floor 2 outputs, ceil 3.
    let k3s2 = || vec![ints("kernel_shape", &[3, 3]), ints("strides", &[2, 2])];
    assert_eq!(pool(6, k3s2()).unwrap(), [1, 1, 2, 2]);
    let mut ceil = k3s2();
    ceil.push(int("ceil_mode", 1));
    assert_eq!(pool(6, ceil).unwrap(), [1, 1, 3, 3]);
    // Pads 1,1 on 5 with k=2 s=2: (7 - 2) / 2 = 2.5 -> ceil 4, but window 3 would start at 6,
    // past the input and its leading pad (5 + 1): 3, as ONNX Runtime computes.
    let attrs = vec![
        ints("kernel_shape", &[2, 2]),
        ints("strides", &[2, 2]),
        ints("pads", &[1, 1, 1, 1]),
        int("ceil_mode", 1),
    ];
    assert_eq!(pool(5, attrs).unwrap(), [1, 1, 3, 3]);
    // ConvTranspose: s (n - 1) + output_padding + (k - 1) d + 1 - pads.
    let ct = node(
        "ConvTranspose",
        2,
        vec![
            ints("strides", &[2, 2]),
            ints("pads", &[1, 1, 1, 1]),
            ints("output_padding", &[1, 0]),
        ],
    );
    assert_eq!(
        shape_of(
            &ct,
            &[Some(info(1, &[1, 4, 5, 5])), Some(info(1, &[4, 2, 3, 3]))]
        )
        .unwrap(),
        [1, 2, 10, 9]
    );
}

#[test]
fn reshape_copies_zeros_and_infers_minus_one() {
    let x = info(1, &[2, 3, 4]);
    let reshape = |shape: &[i64], attrs| {
        shape_of(
            &node("Reshape", 2, attrs),
            &[Some(x.clone()), Some(const_ints(shape))],
        )
    };
    assert_eq!(reshape(&[0, -1], vec![]).unwrap(), [2, 12]);
    assert_eq!(reshape(&[-1, 0, 2], vec![]).unwrap(), [4, 3, 2]);
    assert_eq!(reshape(&[4, 6], vec![int("allowzero", 1)]).unwrap(), [4, 6]);
    let error = reshape(&[0, 5, -1], vec![]).unwrap_err();
    assert!(error.contains("cannot be reshaped"), "{error}");
    let error = reshape(&[-1, -1], vec![]).unwrap_err();
    assert!(error.contains("more than one -1"), "{error}");
    // allowzero: a 0 is a size of 0, so the input's 24 elements do not fit.
    let error = reshape(&[0, 24], vec![int("allowzero", 1)]).unwrap_err();
    assert!(error.contains("cannot be reshaped"), "{error}");
    // A shape computed at run time: not inferable, and says so.
    let error = shape_of(
        &node("Reshape", 2, vec![]),
        &[Some(x.clone()), Some(info(INT64, &[2]))],
    )
    .unwrap_err();
    assert!(
        error.contains("its shape (input 1, `in1`) is not a constant known before inference"),
        "{error}"
    );
}

#[test]
fn matmul_1d_rules() {
    assert_eq!(matmul(&[3], &[3]).unwrap(), Vec::<u64>::new());
    assert_eq!(matmul(&[3], &[2, 3, 4]).unwrap(), [2, 4]);
    assert_eq!(matmul(&[2, 5, 3], &[3]).unwrap(), [2, 5]);
    assert_eq!(matmul(&[7, 1, 5, 3], &[4, 3, 2]).unwrap(), [7, 4, 5, 2]);
    assert!(
        matmul(&[2, 3], &[4, 5])
            .unwrap_err()
            .contains("inner dimensions 3 and 4")
    );
    assert!(matmul(&[], &[4]).is_err());
}

#[test]
fn shape_operators() {
    let x = info(1, &[1, 3, 1, 5]);
    let one_in = |op: &str, attrs| shape_of(&node(op, 1, attrs), &[Some(x.clone())]);
    assert_eq!(one_in("Squeeze", vec![]).unwrap(), [3, 5]);
    assert_eq!(
        one_in("Squeeze", vec![ints("axes", &[-2])]).unwrap(),
        [1, 3, 5]
    );
    assert!(one_in("Squeeze", vec![ints("axes", &[1])]).is_err());
    assert_eq!(
        one_in("Unsqueeze", vec![ints("axes", &[0, -1])]).unwrap(),
        [1, 1, 3, 1, 5, 1]
    );
    assert_eq!(one_in("Flatten", vec![int("axis", 2)]).unwrap(), [3, 5]);
    assert_eq!(one_in("Transpose", vec![]).unwrap(), [5, 1, 3, 1]);
    assert_eq!(
        one_in(
            "ReduceMean",
            vec![ints("axes", &[1, 3]), int("keepdims", 0)]
        )
        .unwrap(),
        [1, 1]
    );
    assert_eq!(one_in("GlobalAveragePool", vec![]).unwrap(), [1, 3, 1, 1]);
    let slice = node("Slice", 5, vec![]);
    assert_eq!(
        shape_of(
            &slice,
            &[
                Some(info(1, &[4, 5, 6])),
                Some(const_ints(&[-1, 4])),
                Some(const_ints(&[-1000, 0])),
                Some(const_ints(&[2, 1])),
                Some(const_ints(&[-1, -2])),
            ]
        )
        .unwrap(),
        [4, 2, 6]
    );
    // Data-dependent and unknown operators are named.
    let error = shape_of(&node("NonZero", 1, vec![]), &[Some(x.clone())]).unwrap_err();
    assert!(
        error.contains("depends on values computed at run time"),
        "{error}"
    );
    let error = shape_of(&node("MyOp", 1, vec![]), &[Some(x)]).unwrap_err();
    assert!(
        error.contains("does not infer the shapes of this operator"),
        "{error}"
    );
}

fn dtype_code(name: &str) -> i32 {
    match name {
        "f32" => 1,
        "u8" => 2,
        "i8" => 3,
        "i32" => 6,
        "i64" => 7,
        "bool" => 9,
        other => panic!("dtype {other}"),
    }
}

fn raw_data(dtype: &str, data: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in data {
        match dtype {
            "f32" => {
                let f = match v.as_str() {
                    Some("nan") => f32::NAN,
                    Some("inf") => f32::INFINITY,
                    Some("-inf") => f32::NEG_INFINITY,
                    _ => v.as_f64().unwrap() as f32,
                };
                out.extend(f.to_le_bytes());
            }
            "i64" => out.extend(v.as_i64().unwrap().to_le_bytes()),
            "i32" => out.extend((v.as_i64().unwrap() as i32).to_le_bytes()),
            _ => out.push(v.as_i64().unwrap() as u8),
        }
    }
    out
}

fn attribute(op: &str, a: &Value) -> AttributeProto {
    let name = a["name"].as_str().unwrap().to_owned();
    let mut attr = AttributeProto {
        name,
        ..AttributeProto::default()
    };
    if op == "ConstantOfShape" && attr.name == "value" {
        // A one-element tensor.
        attr.r#type = 4;
        attr.t = Some(match a.get("float") {
            Some(f) => TensorProto {
                dims: vec![1],
                data_type: 1,
                raw_data: (f.as_f64().unwrap() as f32).to_le_bytes().to_vec(),
                ..TensorProto::default()
            },
            None => TensorProto {
                dims: vec![1],
                data_type: 7,
                raw_data: a["int"].as_i64().unwrap().to_le_bytes().to_vec(),
                ..TensorProto::default()
            },
        });
    } else if let Some(v) = a.get("int") {
        attr.r#type = 2;
        attr.i = v.as_i64().unwrap();
    } else if let Some(v) = a.get("float") {
        attr.r#type = 1;
        attr.f = v.as_f64().unwrap() as f32;
    } else if let Some(v) = a.get("str") {
        attr.r#type = 3;
        attr.s = v.as_str().unwrap().as_bytes().to_vec();
    } else if let Some(v) = a.get("ints") {
        attr.r#type = 7;
        attr.ints = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
    } else if let Some(v) = a.get("floats") {
        attr.r#type = 6;
        attr.floats = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
    }
    attr
}

/// Every case of `memplan-kernels/tests/kernel_cases/cases.json` (one node over constant inputs,
/// with the output shapes and types ONNX Runtime computed) inferred without running it.
#[test]
fn issue_36_values_past_the_limit_are_dropped_and_their_use_says_so() {
    // x [2, 3] -> Reshape(x, Identity(shape = [3, 2])): the shape operand's value is needed.
    let shape = TensorProto {
        dims: vec![2],
        data_type: INT64,
        name: "shape".into(),
        int64_data: vec![3, 2],
        ..TensorProto::default()
    };
    let input = ValueInfoProto {
        name: "x".into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: FLOAT,
                shape: Some(TensorShapeProto {
                    dim: [2, 3]
                        .map(|d| Dimension {
                            value: Some(DimensionValue::DimValue(d)),
                        })
                        .to_vec(),
                }),
            })),
        }),
    };
    let named = |op: &str, inputs: &[&str], output: &str| NodeProto {
        input: inputs.iter().map(|&i| i.to_owned()).collect(),
        output: vec![output.into()],
        name: format!("/{op}"),
        op_type: op.into(),
        ..NodeProto::default()
    };
    let graph = GraphProto {
        node: vec![
            named("Identity", &["shape"], "s"),
            named("Reshape", &["x", "s"], "y"),
        ],
        initializer: vec![shape],
        input: vec![input],
        ..GraphProto::default()
    };
    let infer_within = |limit: u64| {
        let types = BTreeMap::new();
        infer(&graph, &types, &BTreeMap::new(), 17, Path::new("."), limit)
            .get("y")
            .cloned()
    };
    assert_eq!(infer_within(u64::MAX), Some(Ok((FLOAT, vec![3, 2]))));
    // No room for the values (the smallest budget of a file is 16 MiB; here, none): the
    // Reshape's shape is unknown, and its message says which operand.
    let error = infer_within(0).unwrap().unwrap_err();
    assert!(
        error.contains("/Reshape") && error.contains("shape"),
        "{error}"
    );
}

#[test]
fn kernel_cases_infer_onnx_runtime_s_shapes() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../memplan-kernels/tests/kernel_cases/cases.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipping: {} not found", path.display());
        return;
    };
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let op = case["op"].as_str().unwrap();
        // The opset the case was made with, when its name ends in it (`slice_attr_9`).
        let opset = name
            .rsplit('_')
            .next()
            .and_then(|s| s.trim_start_matches("opset").parse::<i64>().ok())
            .unwrap_or(17);
        let microsoft = matches!(
            op,
            "QLinearAdd" | "QLinearMul" | "QGemm" | "QLinearGlobalAveragePool"
        );
        let mut initializer = Vec::new();
        let mut input = Vec::new();
        for (k, value) in case["inputs"].as_array().unwrap().iter().enumerate() {
            if value.is_null() {
                input.push(String::new());
                continue;
            }
            let dtype = value["dtype"].as_str().unwrap();
            initializer.push(TensorProto {
                dims: value["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_i64().unwrap())
                    .collect(),
                data_type: dtype_code(dtype),
                name: format!("in{k}"),
                raw_data: raw_data(dtype, value["data"].as_array().unwrap()),
                ..TensorProto::default()
            });
            input.push(format!("in{k}"));
        }
        let outputs = case["outputs"].as_array().unwrap();
        let graph = GraphProto {
            node: vec![NodeProto {
                input,
                output: (0..outputs.len()).map(|k| format!("out{k}")).collect(),
                name: name.into(),
                op_type: op.into(),
                domain: if microsoft { "com.microsoft" } else { "" }.into(),
                attribute: case["attrs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| attribute(op, a))
                    .collect(),
            }],
            initializer,
            ..GraphProto::default()
        };
        let shapes = infer(
            &graph,
            &BTreeMap::new(),
            &BTreeMap::new(),
            opset,
            Path::new("."),
            u64::MAX,
        );
        for (k, want) in outputs.iter().enumerate() {
            let want: (i32, Vec<u64>) = (
                dtype_code(want["dtype"].as_str().unwrap()),
                want["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap())
                    .collect(),
            );
            let got = shapes.get(&format!("out{k}")).cloned();
            if got.as_ref() != Some(&Ok(want.clone())) {
                failures.push(format!(
                    "{name} ({op}) output {k}: {got:?}, ONNX Runtime {want:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!(
        "{} kernel cases: every output's shape and type inferred",
        cases.len()
    );
}

/// The ONNX files to strip: `../shared/bench/{runnable,tinyml,models}` (each skipped with a
/// message when absent) and the repository's fixtures.
fn onnx_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bench = std::env::var_os("MEMPLAN_BENCH_DIR")
        .map_or_else(|| root.join("../shared/bench"), PathBuf::from);
    let mut files = Vec::new();
    let mut add = |dir: PathBuf, required: bool| {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            if required {
                println!("skipping {}: the folder is absent", dir.display());
            }
            return;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
            .collect();
        found.sort();
        files.extend(found);
    };
    for dir in ["runnable", "tinyml", "models"] {
        add(bench.join(dir), true);
    }
    for dir in [
        "memplan-runner/models",
        "memplan-runner/tests/fixtures",
        "memplan-runner/tests/fixtures/onnx_int8",
        "memplan-build/tests/fixtures",
        "memplan-cli/tests/fixtures",
        "tests/network-crate/models",
    ] {
        add(root.join(dir), false);
    }
    files
}

/// Everything an import gives that a model's user sees: the model file, the model, the graph
/// (shapes, weights with their folded nodes' output types, ops), the notes and the plan.
fn import_all(path: &Path, bytes: &[u8]) -> Result<Vec<String>, String> {
    let mut seen = Vec::new();
    for with_weights in [false, true] {
        let options = ImportOptions {
            with_weights,
            base_dir: path.parent().map(Path::to_path_buf),
            ..ImportOptions::default()
        };
        let name = path.to_string_lossy();
        let imported = import(&name, "model.toml", bytes, &options).map_err(|e| e.message)?;
        let plan = plan_model(&imported.model).map_err(|e| e.message)?;
        seen.push(imported.toml);
        seen.push(format!("{:?}", imported.model));
        seen.push(format!("{:?}", imported.graph));
        seen.push(format!(
            "{:?} {} {}",
            imported.notes, imported.nodes, imported.folded
        ));
        seen.push(format!("{plan:?}"));
    }
    Ok(seen)
}

/// Every ONNX model imported without its `value_info` (and, again, without its graph outputs'
/// types) is the same as imported from the file: model file, tensors, dtypes, shapes, weights
/// and plan.
#[test]
fn stripped_models_import_identically() {
    let mut compared = 0;
    for path in onnx_files() {
        let bytes = std::fs::read(&path).unwrap();
        let shown = path.display();
        let Ok(original) = import_all(&path, &bytes) else {
            // A fixture that is meant to fail (a dynamic shape, a missing weight).
            println!("{shown}: does not import with its value_info either; not compared");
            continue;
        };
        let declared = ModelProto::decode(&bytes[..])
            .ok()
            .and_then(|m| m.graph)
            .map_or(0, |g| g.value_info.len());
        for outputs in [false, true] {
            let stripped = strip_value_info(&bytes, outputs).unwrap();
            let graph = ModelProto::decode(&stripped[..]).unwrap().graph.unwrap();
            assert!(graph.value_info.is_empty());
            let again = match import_all(&path, &stripped) {
                Ok(again) => again,
                // The runner's fixture of an operator memplan does not run (`Det`): once its
                // output's declared type is gone too, nothing says what it is.
                Err(e)
                    if path.ends_with("unsupported_op.onnx")
                        && e.contains(
                            "memplan cannot infer it: node `/det/Det` (Det): memplan \
                                       does not infer the shapes of this operator",
                        ) =>
                {
                    println!("{shown} (outputs stripped: {outputs}): refused as expected: {e}");
                    continue;
                }
                Err(e) => panic!("{shown} (outputs stripped: {outputs}): {e}"),
            };
            for (a, b) in original.iter().zip(&again) {
                assert!(
                    a == b,
                    "{shown} (outputs stripped: {outputs}) differs:\n{a}\n---\n{b}"
                );
            }
        }
        compared += 1;
        println!("{shown}: {declared} value_info entries removed, the same import");
    }
    println!("{compared} models compared");
}

#[test]
fn stripping_keeps_every_other_byte() {
    let bytes = crate::tests::tiny_bytes();
    let stripped = strip_value_info(&bytes, false).unwrap();
    let mut model = ModelProto::decode(&bytes[..]).unwrap();
    model.graph.as_mut().unwrap().value_info.clear();
    assert_eq!(stripped, model.encode_to_vec());
    assert!(strip_value_info(&bytes[..bytes.len() - 1], false).is_err());
}

/// No attribute value and no missing input makes inference (or the import around it) panic:
/// every integer attribute of every node of the small stripped models set to extremes, one at a
/// time, and every node's inputs cut short.
#[test]
fn hostile_attributes_never_panic() {
    let mut models = 0;
    for path in onnx_files() {
        // The repository's fixtures and the keyword spotters (the larger networks would take
        // minutes in a debug build).
        let shown = path.to_string_lossy();
        if shown.contains("/models/") && !shown.contains("memplan-runner/models")
            || shown.contains("/runnable/")
        {
            continue;
        }
        let started = std::time::Instant::now();
        let bytes = std::fs::read(&path).unwrap();
        let Ok(stripped) = strip_value_info(&bytes, true) else {
            continue;
        };
        let Ok(model) = ModelProto::decode(&stripped[..]) else {
            continue;
        };
        let Some(graph) = model.graph.as_ref() else {
            continue;
        };
        let try_graph = |graph: GraphProto| {
            let mut m = model.clone();
            m.graph = Some(graph);
            let options = ImportOptions {
                with_weights: true,
                base_dir: path.parent().map(Path::to_path_buf),
                ..ImportOptions::default()
            };
            // Ok or Err; never a panic.
            let _ = import("hostile.onnx", "hostile.toml", &m.encode_to_vec(), &options);
        };
        for k in 0..graph.node.len() {
            for a in 0..graph.node[k].attribute.len() {
                for v in [0, -1, 3, i64::MIN, i64::MAX] {
                    let mut g = graph.clone();
                    let attr = &mut g.node[k].attribute[a];
                    attr.i = v;
                    for x in &mut attr.ints {
                        *x = v;
                    }
                    try_graph(g.clone());
                    g.node[k].attribute[a].ints.truncate(1);
                    try_graph(g);
                }
            }
            let mut g = graph.clone();
            g.node[k].input.truncate(1);
            try_graph(g);
        }
        models += 1;
        println!("{shown}: {:.1} s", started.elapsed().as_secs_f64());
    }
    println!("{models} models mutated");
}
