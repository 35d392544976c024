use std::path::PathBuf;

use memplan_core::{lower_bound, read_csv};
use prost::Message;

use super::proto::*;
use super::*;
use crate::weights_table::with_weights;

fn value(name: &str, elem_type: i32, dims: &[Result<i64, &str>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Ok(v) => DimensionValue::DimValue(*v),
                Err(p) => DimensionValue::DimParam((*p).to_string()),
            }),
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type,
                shape: Some(TensorShapeProto { dim }),
            })),
        }),
    }
}

fn node(name: &str, op_type: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        name: name.into(),
        op_type: op_type.into(),
        domain: String::new(),
        attribute: vec![],
    }
}

/// x[1,4] -> Add(x, w) -> Relu -> Reshape(relu, Shape(relu)) -> y, with a Constant and a weight
/// Identity to fold. `batch` may be symbolic.
fn tiny(batch: Result<i64, &str>) -> ModelProto {
    let f32 = 1;
    let weight = TensorProto {
        dims: vec![1, 4],
        data_type: f32,
        name: "w".into(),
        external_data: vec![StringStringEntryProto {
            key: "location".into(),
            value: "weights.bin".into(),
        }],
        data_location: 1,
        ..TensorProto::default()
    };
    let graph = GraphProto {
        node: vec![
            node("/const", "Constant", &[], &["c"]),
            node("/w/Identity", "Identity", &["w"], &["w2"]),
            node("/add/Add", "Add", &["x", "w2"], &["/add/Add_output_0"]),
            node("/relu/Relu", "Relu", &["/add/Add_output_0"], &["relu:0"]),
            node("/shape", "Shape", &["relu:0"], &["s"]),
            node("", "Reshape", &["relu:0", "s"], &["y"]),
        ],
        name: "tiny".into(),
        initializer: vec![weight],
        sparse_initializer: vec![],
        input: vec![
            value("x", f32, &[batch, Ok(4)]),
            value("w", f32, &[Ok(1), Ok(4)]),
        ],
        output: vec![value("y", f32, &[batch, Ok(4)])],
        value_info: vec![
            value("/add/Add_output_0", f32, &[batch, Ok(4)]),
            value("relu:0", f32, &[batch, Ok(4)]),
            value("s", 7, &[Ok(2)]),
            value("c", f32, &[Ok(1)]),
        ],
    };
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        producer_name: "test".into(),
        graph: Some(graph),
    }
}

/// `tiny(Ok(1))`'s bytes.
pub(crate) fn tiny_bytes() -> Vec<u8> {
    tiny(Ok(1)).encode_to_vec()
}

fn import_bytes(bytes: &[u8], options: &ImportOptions) -> Result<Imported, ImportError> {
    import("tiny.onnx", "tiny.toml", bytes, options)
}

#[test]
fn folds_constants_and_static_shapes_and_keeps_the_rest() {
    let imported = import_bytes(&tiny(Ok(1)).encode_to_vec(), &ImportOptions::default()).unwrap();
    let model = &imported.model;
    assert_eq!(model.name, "tiny");
    assert_eq!(imported.nodes, 6);
    assert_eq!(imported.folded, 3, "Constant, Identity of a weight, Shape");
    let names: Vec<&str> = model.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["x", "add_add_output_0", "relu_0", "y"]);
    assert_eq!(
        model.tensors[2].source.as_deref(),
        Some("relu:0"),
        "the ONNX name is kept"
    );
    assert_eq!(
        model.tensors[0].source, None,
        "no source when the name is unchanged"
    );
    let ops: Vec<(&str, Option<&str>)> = model
        .ops
        .iter()
        .map(|o| (o.name.as_str(), o.kind.as_deref()))
        .collect();
    assert_eq!(
        ops,
        [
            ("add_add", Some("Add")),
            ("relu_relu", Some("Relu")),
            ("reshape_5", Some("Reshape"))
        ]
    );
    // The Reshape reads only the activation, not the folded shape.
    assert_eq!(model.ops[2].inputs, vec![2]);
    assert_eq!(model.inputs, vec![0]);
    assert_eq!(model.outputs, vec![3]);
    let lifetimes: Vec<(u64, u64)> = model
        .tensors
        .iter()
        .map(|t| (t.lifetime.start, t.lifetime.end))
        .collect();
    assert_eq!(lifetimes, [(0, 1), (0, 2), (1, 3), (2, 3)]);
    assert!(model.tensors.iter().all(|t| t.size == 16));
    assert!(imported.toml.contains("kind = \"Relu\""));
    assert!(imported.toml.contains("source = \"relu:0\""));
}

#[test]
fn dynamic_dims_need_a_value() {
    let bytes = tiny(Err("batch")).encode_to_vec();
    let error = import_bytes(&bytes, &ImportOptions::default()).unwrap_err();
    assert!(
        error
            .message
            .contains("graph input `x` has dynamic dimension `batch` (axis 0)"),
        "{error}"
    );
    assert!(error.message.contains("--dim batch=1"), "{error}");
    let options = ImportOptions {
        dims: [("batch".to_string(), 3)].into(),
        ..ImportOptions::default()
    };
    let imported = import_bytes(&bytes, &options).unwrap();
    assert_eq!(imported.model.tensors[0].size, 3 * 4 * 4);
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);
    let options = ImportOptions {
        dims: [("batch".to_string(), 1), ("Batch".to_string(), 2)].into(),
        ..ImportOptions::default()
    };
    let imported = import_bytes(&bytes, &options).unwrap();
    assert_eq!(
        imported.notes,
        ["`--dim Batch=...` matches no dimension of the model (names are case-sensitive)"]
    );
}

#[test]
fn unknown_dtypes_are_named() {
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    graph.value_info[1] = value("relu:0", 8, &[Ok(1), Ok(4)]);
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error
            .message
            .contains("tensor `relu:0` has element type STRING (ONNX data type 8)"),
        "{error}"
    );
    graph_value_mut(&mut model, 1, 99);
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(error.message.contains("ONNX data type 99"), "{error}");
}

fn graph_value_mut(model: &mut ModelProto, index: usize, elem_type: i32) {
    let info = &mut model.graph.as_mut().unwrap().value_info[index];
    if let Some(TypeProto {
        value: Some(type_proto::Value::TensorType(t)),
    }) = info.r#type.as_mut()
    {
        t.elem_type = elem_type;
    }
}

#[test]
fn missing_shapes_are_inferred() {
    // Without any `value_info` the import is the same: every shape is inferred.
    let original = tiny(Ok(1));
    let mut stripped = original.clone();
    stripped.graph.as_mut().unwrap().value_info.clear();
    for with_weights in [false, true] {
        let options = ImportOptions {
            with_weights,
            ..ImportOptions::default()
        };
        let a = import_bytes(&original.encode_to_vec(), &options).unwrap();
        let b = import_bytes(&stripped.encode_to_vec(), &options).unwrap();
        assert_eq!(a.toml, b.toml);
        assert_eq!(a.model, b.model);
        assert_eq!(a.graph, b.graph);
    }
}

#[test]
fn missing_shapes_that_cannot_be_inferred_say_to_run_shape_inference() {
    // An operator of another domain: its output's shape is unknown.
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    graph.value_info.remove(0);
    graph.node[2].op_type = "FancyAdd".into();
    graph.node[2].domain = "com.example".into();
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error.message.contains(
            "tensor `/add/Add_output_0` has no type or shape information, and memplan cannot \
             infer it: node `/add/Add` (FancyAdd): memplan does not infer the shapes of \
             operators of domain `com.example`"
        ),
        "{error}"
    );
    assert!(error.message.contains("shape_inference"), "{error}");
    // What comes after it is unknown too, and says why.
    let graph = model.graph.as_mut().unwrap();
    graph.value_info.clear();
    graph
        .value_info
        .push(value("/add/Add_output_0", 1, &[Ok(1), Ok(4)]));
    assert!(import_bytes(&model.encode_to_vec(), &ImportOptions::default()).is_ok());
}

#[test]
fn declared_shapes_that_disagree_with_inference_are_refused() {
    let mut model = tiny(Ok(1));
    model.graph.as_mut().unwrap().value_info[1] = value("relu:0", 1, &[Ok(4), Ok(1)]);
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error.message.contains(
            "tensor `relu:0` is declared as [4, 1] of f32 in the file, but its inputs make it \
             [1, 4] of f32 by node `/relu/Relu` (Relu)"
        ),
        "{error}"
    );
    assert!(error.message.contains("help:"), "{error}");
    // A dtype that disagrees.
    let mut model = tiny(Ok(1));
    model.graph.as_mut().unwrap().value_info[1] = value("relu:0", 11, &[Ok(1), Ok(4)]);
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error.message.contains("declared as [1, 4] of f64"),
        "{error}"
    );
    // A partial declaration (a dimension without value) is completed by inference.
    let mut model = tiny(Ok(1));
    let mut partial = value("relu:0", 1, &[Ok(1), Ok(4)]);
    if let Some(TypeProto {
        value: Some(type_proto::Value::TensorType(t)),
    }) = partial.r#type.as_mut()
    {
        t.shape.as_mut().unwrap().dim[0].value = None;
    }
    model.graph.as_mut().unwrap().value_info[1] = partial;
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    assert_eq!(imported.graph.tensor_shapes[2], [1, 4]);
}

#[test]
fn bad_files_are_rejected_with_reasons() {
    let good = tiny(Ok(1)).encode_to_vec();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "the file is empty"),
        ("zip", b"PK\x03\x04rest".to_vec(), "zip archive"),
        (
            "text",
            b"hello, this is not a model\n".to_vec(),
            "not an ONNX model",
        ),
        (
            "toml",
            b"[model]\nname = \"x\"\n".to_vec(),
            "memplan model TOML",
        ),
        (
            "truncated",
            good[..good.len() / 2].to_vec(),
            "not an ONNX model",
        ),
        (
            "one byte short",
            good[..good.len() - 1].to_vec(),
            "not an ONNX model",
        ),
    ];
    for (what, bytes, expected) in cases {
        let error = import_bytes(&bytes, &ImportOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: imported"));
        assert!(error.message.contains(expected), "{what}: {error}");
        assert!(error.message.contains("help:"), "{what}: {error}");
    }
}

#[test]
fn every_truncation_fails_cleanly() {
    // No prefix of a model panics; each gives an error or (at a message boundary) a smaller
    // model that still checks.
    let good = tiny(Ok(1)).encode_to_vec();
    for end in 0..good.len() {
        if let Ok(imported) = import_bytes(&good[..end], &ImportOptions::default()) {
            assert!(!imported.model.tensors.is_empty());
        }
    }
}

/// `<workspace>/../shared/bench`, or `MEMPLAN_BENCH_DIR`.
fn bench_dir() -> PathBuf {
    std::env::var_os("MEMPLAN_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"),
        PathBuf::from,
    )
}

#[test]
fn bench_models_import_to_their_published_tensors() {
    let dir = bench_dir().join("models");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipping: {} not found", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".graph.onnx"))
        .collect();
    files.sort();
    if files.is_empty() {
        println!("skipping: no *.graph.onnx in {}", dir.display());
        return;
    }
    for path in files {
        let stem = path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".graph.onnx", "");
        let bytes = std::fs::read(&path).unwrap();
        let imported = import(&stem, "model.toml", &bytes, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        let model = &imported.model;
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap(),
        )
        .unwrap();
        let expected = json["tensors"].as_array().unwrap();
        assert_eq!(model.tensors.len(), expected.len(), "{stem}: tensors");
        assert_eq!(
            model.steps(),
            json["steps"].as_u64().unwrap(),
            "{stem}: steps"
        );
        // Tensor by tensor, in order: the same ONNX name, bytes and inclusive [first, last].
        for (tensor, want) in model.tensors.iter().zip(expected) {
            let onnx_name = tensor.source.as_deref().unwrap_or(&tensor.name);
            assert_eq!(onnx_name, want["name"].as_str().unwrap(), "{stem}");
            assert_eq!(
                tensor.size,
                want["size"].as_u64().unwrap(),
                "{stem}: {onnx_name}"
            );
            assert_eq!(
                (tensor.lifetime.start, tensor.lifetime.end - 1),
                (
                    want["first"].as_u64().unwrap(),
                    want["last"].as_u64().unwrap()
                ),
                "{stem}: {onnx_name}"
            );
        }
        let csv = read_csv(
            "csv",
            &std::fs::read_to_string(dir.join(format!("{stem}.csv"))).unwrap(),
        )
        .unwrap()
        .problem;
        let problem = model.to_problem();
        assert_eq!(problem.len(), csv.len(), "{stem}");
        assert_eq!(
            lower_bound(&problem),
            lower_bound(&csv),
            "{stem}: lower bound"
        );
        println!(
            "{stem}: {} nodes, {} folded, {} ops, {} tensors, lower bound {} (CSV {})",
            imported.nodes,
            imported.folded,
            model.ops.len(),
            problem.len(),
            lower_bound(&problem),
            lower_bound(&csv)
        );
    }
}

/// Small ONNX files for the CLI's integration tests (`tests/fixtures/*.onnx`): a good one, one
/// with a symbolic batch dimension, one with a STRING tensor. `MEMPLAN_BLESS=1` rewrites them.
#[test]
fn onnx_fixtures_are_current() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../memplan-cli/tests/fixtures");
    let mut string_typed = tiny(Ok(1));
    graph_value_mut(&mut string_typed, 1, 8);
    let fixtures = [
        ("tiny.onnx", tiny(Ok(1)).encode_to_vec()),
        ("tiny_dynamic.onnx", tiny(Err("batch")).encode_to_vec()),
        ("tiny_string.onnx", string_typed.encode_to_vec()),
    ];
    for (name, bytes) in fixtures {
        let path = dir.join(name);
        if std::env::var_os("MEMPLAN_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let committed = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run with MEMPLAN_BLESS=1", path.display()));
        assert_eq!(
            committed, bytes,
            "{name} is stale; run with MEMPLAN_BLESS=1"
        );
    }
}

#[test]
fn malformed_graphs_name_the_node_and_value() {
    let mut model = tiny(Ok(1));
    model.graph.as_mut().unwrap().node[3].input[0] = "nowhere".into();
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error
            .message
            .contains("node `/relu/Relu` reads `nowhere`, which is not a graph input"),
        "{error}"
    );
    let mut model = tiny(Ok(1));
    model.graph.as_mut().unwrap().output[0].name = "missing".into();
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error
            .message
            .contains("graph output `missing` is not produced"),
        "{error}"
    );
}

#[test]
fn unused_inputs_and_constant_outputs_are_noted_and_left_out() {
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    graph.input.push(value("unused", 1, &[Ok(2)]));
    graph.output.push(value("c", 1, &[Ok(1)]));
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    assert_eq!(imported.model.tensors.len(), 4);
    assert_eq!(
        imported.notes,
        [
            "graph input `unused` is not read by any op; left out",
            "graph output `c` is a constant (known before inference); left out"
        ]
    );
}

#[test]
fn names_that_collide_after_sanitising_get_suffixes() {
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    // `relu:0` and `relu.0` both become `relu_0`; a tensor named `new` would clash with
    // `Arena::new`.
    graph.node[4] = node("/relu2", "Relu", &["relu:0"], &["relu.0"]);
    graph.node[5] = node("", "Reshape", &["relu.0"], &["new"]);
    graph.output[0] = value("new", 1, &[Ok(1), Ok(4)]);
    graph.value_info.push(value("relu.0", 1, &[Ok(1), Ok(4)]));
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let names: Vec<&str> = imported
        .model
        .tensors
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["x", "add_add_output_0", "relu_0", "relu_0_2", "new_2"]
    );
    assert_eq!(imported.model.tensors[3].source.as_deref(), Some("relu.0"));
}

#[test]
fn corrupted_bytes_never_panic() {
    // Every byte of a good model replaced by a few other values (fixed xorshift sequence): each
    // import returns a model that checks or an error, never a panic.
    let good = tiny(Err("batch")).encode_to_vec();
    let options = ImportOptions {
        dims: [("batch".to_string(), 2)].into(),
        ..ImportOptions::default()
    };
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let (mut imported, mut rejected) = (0, 0);
    for position in 0..good.len() {
        for _ in 0..4 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut bytes = good.clone();
            bytes[position] = state as u8;
            match import_bytes(&bytes, &options) {
                Ok(model) => {
                    assert!(!model.model.ops.is_empty());
                    imported += 1;
                }
                Err(e) => {
                    assert!(e.message.contains("help:"), "{e}");
                    rejected += 1;
                }
            }
        }
    }
    assert!(
        imported > 0 && rejected > 0,
        "{imported} imported, {rejected} rejected"
    );
}

/// Issue 12 item 8: malformed graphs are explained, never called a bug in the importer, never
/// located in a model file that is not written.
#[test]
fn malformed_graphs_are_explained() {
    let check = |model: ModelProto, options: &ImportOptions, expected: &[&str]| {
        let error = import_bytes(&model.encode_to_vec(), options).unwrap_err();
        for text in expected {
            assert!(error.message.contains(text), "`{text}` not in: {error}");
        }
        assert!(!error.message.contains("bug in the importer"), "{error}");
        assert!(!error.message.contains("tiny.toml"), "{error}");
    };
    let options = ImportOptions::default();

    let mut duplicate_outputs = tiny(Ok(1));
    let graph = duplicate_outputs.graph.as_mut().unwrap();
    graph.output.push(graph.output[0].clone());
    check(
        duplicate_outputs,
        &options,
        &["graph output `y` is listed twice", "remove the duplicate"],
    );

    let mut out_of_order = tiny(Ok(1));
    out_of_order.graph.as_mut().unwrap().node.swap(2, 3);
    check(
        out_of_order,
        &options,
        &[
            "node `/relu/Relu` (node 2) reads `/add/Add_output_0`, which node `/add/Add` (node 3) produces later",
            "not in topological order",
        ],
    );

    let mut own_output = tiny(Ok(1));
    own_output.graph.as_mut().unwrap().node[3].input[0] = "relu:0".into();
    check(
        own_output,
        &options,
        &["node `/relu/Relu` (node 3, Relu) reads its own output `relu:0`"],
    );
}

#[test]
fn bad_options_are_explained() {
    let bytes = tiny(Ok(1)).encode_to_vec();
    for (options, expected) in [
        (
            ImportOptions {
                alignment: 3,
                ..ImportOptions::default()
            },
            "alignment 3 is not a power of two",
        ),
        (
            ImportOptions {
                alignment: 0,
                ..ImportOptions::default()
            },
            "alignment 0 is not a power of two",
        ),
        (
            ImportOptions {
                name: Some(String::new()),
                ..ImportOptions::default()
            },
            "model name `` is not a valid Rust identifier: it is empty",
        ),
        (
            ImportOptions {
                name: Some("my-model".into()),
                ..ImportOptions::default()
            },
            "--name my_model",
        ),
    ] {
        let error = import_bytes(&bytes, &options).unwrap_err();
        assert!(error.message.contains(expected), "{error}");
        assert!(!error.message.contains("bug in the importer"), "{error}");
        assert!(error.message.contains("help:"), "{error}");
    }
}

#[test]
fn ops_keep_attributes_inputs_in_onnx_order_and_weights() {
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    graph.node[2].attribute = vec![
        AttributeProto {
            name: "axes".into(),
            r#type: 7,
            ints: vec![0, -1],
            ..AttributeProto::default()
        },
        AttributeProto {
            name: "alpha".into(),
            r#type: 1,
            f: 0.5,
            ..AttributeProto::default()
        },
        AttributeProto {
            name: "mode".into(),
            r#type: 3,
            s: b"linear".to_vec(),
            ..AttributeProto::default()
        },
    ];
    // An absent input between two present ones, and a trailing absent one.
    graph.node[5].input = vec!["relu:0".into(), String::new(), "s".into(), String::new()];
    graph.initializer[0] = TensorProto {
        dims: vec![1, 4],
        data_type: 1,
        name: "w".into(),
        float_data: vec![1.0, 2.0, 3.0, 4.0],
        ..TensorProto::default()
    };
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let g = &imported.graph;
    let names: Vec<(&str, &str)> = g
        .weights
        .iter()
        .map(|w| (w.name.as_str(), w.source.as_str()))
        .collect();
    // `w2` is the weight's Identity, `s` the Shape of a static tensor: both folded.
    assert_eq!(names, [("w2", "w2"), ("s", "s")]);
    let w2 = g.weights[0].value.as_ref().unwrap();
    assert_eq!(w2.shape, [1, 4]);
    let floats: Vec<f32> = w2
        .load()
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(floats, [1.0, 2.0, 3.0, 4.0]);
    let s = g.weights[1].value.as_ref().unwrap();
    assert_eq!((s.dtype, s.shape.clone()), (DType::I64, vec![2]));
    assert_eq!(s.load().unwrap(), [1i64, 4].map(i64::to_le_bytes).concat());
    assert_eq!(g.ops[0].inputs, [OpInput::Tensor(0), OpInput::Weight(0)]);
    assert_eq!(
        g.ops[2].inputs,
        [OpInput::Tensor(2), OpInput::Absent, OpInput::Weight(1)]
    );
    assert_eq!(
        g.ops[0].attrs,
        [
            ("axes".to_owned(), AttrValue::Ints(vec![0, -1])),
            ("alpha".to_owned(), AttrValue::Float(0.5)),
            ("mode".to_owned(), AttrValue::Str("linear".into())),
        ]
    );
    assert_eq!(g.tensor_shapes[0], [1, 4]);
    // The model file with weights: `[weights]` before the ops, inputs in ONNX order, attrs.
    let text = with_weights(&imported.toml, &imported.model, g).unwrap();
    assert!(
        text.contains(
            "[weights]\nw2 = { dtype = \"f32\", shape = [1, 4], source = \"w2\" }\ns = { dtype = \"i64\", shape = [2], source = \"s\" }\n\n[[ops]]"
        ),
        "{text}"
    );
    assert!(
        text.contains("inputs = [\"x\", \"w2\"]\noutputs = [\"add_add_output_0\"]\nattrs = { axes = [0, -1], alpha = 0.5, mode = \"linear\" }\n"),
        "{text}"
    );
    assert!(
        text.contains("inputs = [\"relu_0\", \"\", \"s\"]"),
        "{text}"
    );
    // The plain file is unchanged by all this.
    assert!(!imported.toml.contains("[weights]"));
}

#[test]
fn external_data_is_read_relative_to_the_model() {
    let dir = std::env::temp_dir().join(format!("memplan-onnx-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<u8> = [9.0f32, 1.0, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(dir.join("weights.bin"), &data).unwrap();
    let mut model = tiny(Ok(1));
    model.graph.as_mut().unwrap().initializer[0]
        .external_data
        .push(StringStringEntryProto {
            key: "offset".into(),
            value: "4".into(),
        });
    let path = dir.join("tiny.onnx");
    std::fs::write(&path, model.encode_to_vec()).unwrap();
    let imported = import_file(&path, &ImportOptions::default()).unwrap();
    let value = imported.graph.weights[0].value.as_ref().unwrap();
    assert_eq!(value.load().unwrap(), data[4..]);
    // Truncated: the file ends before the weight does.
    std::fs::write(dir.join("weights.bin"), &data[..10]).unwrap();
    let error = value.load().unwrap_err();
    assert!(error.contains("runs past the end"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 19, item 3: external data outside the model's folder is refused, naming the initializer
/// (ONNX Runtime's CVE-2024-27318/27319): absolute paths, `..` above the folder, and symlinks
/// that resolve outside it. Locations inside the folder still import.
#[cfg(unix)]
#[test]
fn external_data_outside_the_model_folder_is_refused() {
    let root = std::env::temp_dir().join(format!("memplan-onnx-escape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("model");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let secret = root.join("secret.bin");
    std::fs::write(&secret, [7u8; 16]).unwrap();
    std::fs::write(dir.join("sub/w.bin"), [0u8; 16]).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("link.bin")).unwrap();
    std::os::unix::fs::symlink(&root, dir.join("up")).unwrap();
    let with_location = |location: &str| {
        let mut model = tiny(Ok(1));
        model.graph.as_mut().unwrap().initializer[0].external_data[0].value = location.into();
        let path = dir.join("tiny.onnx");
        std::fs::write(&path, model.encode_to_vec()).unwrap();
        import_file(&path, &ImportOptions::default())
    };
    for (location, reason) in [
        (secret.to_str().unwrap(), "is an absolute path"),
        ("/etc/passwd", "is an absolute path"),
        ("../secret.bin", "leaves the model's folder"),
        ("sub/../../secret.bin", "leaves the model's folder"),
        ("link.bin", "resolves (through a symlink)"),
        ("up/secret.bin", "resolves (through a symlink)"),
    ] {
        let error = with_location(location).unwrap_err().message;
        assert!(
            error.contains("initializer `w`") && error.contains(reason),
            "{location}: {error}"
        );
        assert!(error.contains("tiny.onnx"), "{error}");
        assert!(
            error.contains("= help: keep external data files"),
            "{error}"
        );
    }
    for location in [
        "sub/w.bin",
        "./sub/w.bin",
        "sub/../sub/w.bin",
        "not-yet.bin",
    ] {
        let imported = with_location(location).unwrap_or_else(|e| panic!("{location}: {e}"));
        let value = imported.graph.weights[0].value.as_ref().unwrap();
        assert!(
            matches!(&value.data, crate::WeightData::External { path, .. } if path.starts_with(&dir)),
            "{location}"
        );
    }
    // A `Constant` node's tensor is checked the same way.
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    let mut tensor = graph.initializer[0].clone();
    tensor.external_data[0].value = "../secret.bin".into();
    graph.node[0].attribute.push(crate::proto::AttributeProto {
        name: "value".into(),
        r#type: 4,
        t: Some(tensor),
        ..Default::default()
    });
    let path = dir.join("constant.onnx");
    std::fs::write(&path, model.encode_to_vec()).unwrap();
    let error = import_file(&path, &ImportOptions::default())
        .unwrap_err()
        .message;
    assert!(
        error.contains("tensor attribute `value` of node `/const`")
            && error.contains("leaves the model's folder"),
        "{error}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Issue 19, item 11: a weight with no elements is not written into the model file (which
/// refuses it, as it refuses such a tensor): the import names it and the node reading it.
#[test]
fn a_zero_element_weight_is_refused_naming_its_node() {
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    let w = &mut graph.initializer[0];
    w.dims = vec![1, 0];
    w.data_location = 0;
    w.external_data.clear();
    graph.input[1] = value("w", 1, &[Ok(1), Ok(0)]);
    let options = ImportOptions {
        with_weights: true,
        ..ImportOptions::default()
    };
    let error = import_bytes(&model.encode_to_vec(), &options)
        .unwrap_err()
        .message;
    assert!(
        error.contains("weight `") && error.contains("has no elements (shape [1, 0])"),
        "{error}"
    );
    assert!(error.contains("= help:"), "{error}");
}

/// Issue 19, item 5: an ONNX value named like a generated method (`views`, `new`) or an op
/// view's local (`rest`) is renamed, so the imported model compiles.
#[test]
fn values_named_like_generated_items_are_renamed() {
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    for name in graph
        .node
        .iter_mut()
        .flat_map(|n| n.input.iter_mut().chain(n.output.iter_mut()))
        .chain(graph.value_info.iter_mut().map(|v| &mut v.name))
    {
        if name == "relu:0" {
            *name = "views".into();
        } else if name == "/add/Add_output_0" {
            *name = "rest".into();
        }
    }
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let names: Vec<&str> = imported
        .model
        .tensors
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert!(
        names.contains(&"views_2") && names.contains(&"rest_2"),
        "{names:?}"
    );
    memplan_core::parse_model("tiny.toml", &imported.toml).unwrap();
}

/// Issue 19, item 4: a folded value is a tree (each input copied into the node that reads it),
/// so a chain of nodes each reading the one before twice would expand to 2^depth nodes, and one
/// reading a huge constant would copy it per use. Past the budget the weight's value is an error
/// naming the node, found at once.
#[test]
fn folded_values_are_bounded_by_node() {
    let f32 = 1;
    let graph_of = |nodes: Vec<NodeProto>, initializer: TensorProto, last: &str, dims: &[i64]| {
        let mut value_info: Vec<ValueInfoProto> = nodes
            .iter()
            .flat_map(|n| n.output.iter())
            .map(|o| value(o, f32, &dims.iter().map(|&d| Ok(d)).collect::<Vec<_>>()))
            .collect();
        value_info.push(value("y", f32, &[Ok(4)]));
        let mut nodes = nodes;
        nodes.push(node("/out/Add", "Add", &["x", last], &["y"]));
        ModelProto {
            ir_version: 8,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: 17,
            }],
            producer_name: "test".into(),
            graph: Some(GraphProto {
                node: nodes,
                name: "bounded".into(),
                initializer: vec![initializer],
                sparse_initializer: vec![],
                input: vec![value("x", f32, &[Ok(4)])],
                output: vec![value("y", f32, &[Ok(4)])],
                value_info,
            }),
        }
    };
    let weight_error = |model: ModelProto, name: &str| {
        let start = std::time::Instant::now();
        let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
        assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
        let weight = imported
            .graph
            .weights
            .iter()
            .find(|w| w.source == name)
            .unwrap();
        weight.value.clone().unwrap_err()
    };

    // 48 `Add(c, c)`: 2^48 nodes as a tree.
    let c0 = TensorProto {
        dims: vec![4],
        data_type: f32,
        name: "c0".into(),
        float_data: vec![1.0, 2.0, 3.0, 4.0],
        ..TensorProto::default()
    };
    let doubling = (0..48)
        .map(|k| {
            let (a, b) = (format!("c{k}"), format!("c{}", k + 1));
            node(&format!("/double/Add_{k}"), "Add", &[&a, &a], &[&b])
        })
        .collect();
    let error = weight_error(graph_of(doubling, c0.clone(), "c48", &[4]), "c48");
    assert!(
        error.contains("folded node `/double/Add_47` (Add)")
            && error.contains(&format!("more than {MAX_FOLDED_NODES} folded nodes")),
        "{error}"
    );
    // A few shared uses are fine: 8 doublings are 255 nodes.
    let small = (0..8)
        .map(|k| {
            let (a, b) = (format!("c{k}"), format!("c{}", k + 1));
            node(&format!("/double/Add_{k}"), "Add", &[&a, &a], &[&b])
        })
        .collect();
    let imported = import_bytes(
        &graph_of(small, c0, "c8", &[4]).encode_to_vec(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(imported.graph.weights.iter().all(|w| w.value.is_ok()));

    // A folded node reading 4 TiB (an external initializer whose shape says so; nothing is read).
    let huge = TensorProto {
        dims: vec![1 << 20, 1 << 20],
        data_type: f32,
        name: "c0".into(),
        external_data: vec![StringStringEntryProto {
            key: "location".into(),
            value: "huge.bin".into(),
        }],
        data_location: 1,
        ..TensorProto::default()
    };
    // ReduceMean over axis 0 of [2^28, 4]: [4], as declared (the shapes must agree).
    let huge = TensorProto {
        dims: vec![1 << 28, 4],
        ..huge
    };
    let mut mean = node("/mean/ReduceMean", "ReduceMean", &["c0"], &["s"]);
    mean.attribute = vec![
        AttributeProto {
            name: "axes".into(),
            r#type: 7,
            ints: vec![0],
            ..AttributeProto::default()
        },
        AttributeProto {
            name: "keepdims".into(),
            r#type: 2,
            i: 0,
            ..AttributeProto::default()
        },
    ];
    let error = weight_error(graph_of(vec![mean], huge, "s", &[4]), "s");
    assert!(
        error.contains("folded node `/mean/ReduceMean` (ReduceMean)")
            && error.contains("more than 1024 MiB of constant inputs"),
        "{error}"
    );
}

#[test]
fn issue_36_twenty_thousand_values_named_x_import_with_distinct_names() {
    // `x/`, `x.`, `x/.`, ...: every name of `x` and punctuation becomes `x` in snake_case.
    let punctuation = ['/', '.', ':', '-', ';', ',', '+', '='];
    let spelled = |mut k: usize| {
        let mut name = String::from("x");
        loop {
            name.push(punctuation[k % punctuation.len()]);
            k /= punctuation.len();
            if k == 0 {
                return name;
            }
        }
    };
    let n = 20_001;
    let inputs: Vec<String> = (0..n).map(spelled).collect();
    let f32 = 1;
    let concat = NodeProto {
        attribute: vec![AttributeProto {
            name: "axis".into(),
            i: 0,
            r#type: 2,
            ..AttributeProto::default()
        }],
        ..node(
            "/concat/Concat",
            "Concat",
            &inputs.iter().map(String::as_str).collect::<Vec<_>>(),
            &["x"],
        )
    };
    let graph = GraphProto {
        node: vec![concat],
        name: "collide".into(),
        input: inputs.iter().map(|i| value(i, f32, &[Ok(1)])).collect(),
        output: vec![value("x", f32, &[Ok(n as i64)])],
        ..GraphProto::default()
    };
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        producer_name: "test".into(),
        graph: Some(graph),
    };
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let names: std::collections::BTreeSet<&str> = imported
        .model
        .tensors
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names.len(), n + 1);
    assert_eq!(imported.model.tensors[0].name, "x");
    assert_eq!(imported.model.tensors[1].name, "x_2");
    assert!(names.contains("x_20002"), "{:?}", names.last());
}

#[test]
fn issue_36_an_initializer_and_a_node_writing_one_value_are_refused() {
    // `tiny`'s Identity writes `w2`; an initializer named `w2` as well.
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    let mut w2 = graph.initializer[0].clone();
    w2.name = "w2".into();
    graph.initializer.push(w2);
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default())
        .unwrap_err()
        .message;
    assert!(
        error.contains("value `w2` is both an initializer and the output of node `/w/Identity` (node 1, Identity)")
            && error.contains("= help:"),
        "{error}"
    );
}

#[test]
fn issue_36_an_if_with_a_constant_condition_is_not_folded() {
    // `tiny` with an If on the constant `c` (its branches, graph attributes, are not decoded
    // here; their type says what they are): it stays an op instead of becoming a weight.
    let mut model = tiny(Ok(1));
    let graph = model.graph.as_mut().unwrap();
    let branch = |name: &str| AttributeProto {
        name: name.into(),
        r#type: 5,
        ..AttributeProto::default()
    };
    graph.node.push(NodeProto {
        attribute: vec![branch("then_branch"), branch("else_branch")],
        ..node("/if/If", "If", &["c"], &["branch_out"])
    });
    graph.output.push(value("branch_out", 1, &[Ok(1), Ok(4)]));
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let kinds: Vec<&str> = imported
        .model
        .ops
        .iter()
        .filter_map(|o| o.kind.as_deref())
        .collect();
    assert!(kinds.contains(&"If"), "{kinds:?}");
    assert!(
        imported
            .graph
            .weights
            .iter()
            .all(|w| w.source != "branch_out"),
        "the If's output became a weight"
    );
}

/// The process's peak resident memory in bytes (Linux: `VmHWM`), if known.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `n` folded nodes `op(inputs)` -> `w{k}`, each read by `Gather(w{k}, idx)` -> `y{k}` (one
/// element), with the initializer `c`.
fn folded_then_gathered(
    c: TensorProto,
    n: usize,
    op: &str,
    inputs: &[&str],
    attribute: Vec<AttributeProto>,
) -> ModelProto {
    let (f32, i64) = (1, 7);
    let mut nodes = Vec::new();
    let mut outputs = Vec::new();
    for k in 0..n {
        let (w, y) = (format!("w{k}"), format!("y{k}"));
        nodes.push(NodeProto {
            attribute: attribute.clone(),
            ..node(&format!("/fold/{op}_{k}"), op, inputs, &[&w])
        });
        nodes.push(node(
            &format!("/g/Gather_{k}"),
            "Gather",
            &[&w, "idx"],
            &[&y],
        ));
        outputs.push(value(&y, f32, &[Ok(1)]));
    }
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        producer_name: "test".into(),
        graph: Some(GraphProto {
            node: nodes,
            name: "held".into(),
            initializer: vec![c],
            input: vec![value("idx", i64, &[Ok(1)])],
            output: outputs,
            ..GraphProto::default()
        }),
    }
}

#[test]
fn issue_36_the_folded_values_of_a_file_hold_a_bounded_multiple_of_it() {
    // Four `Concat`s of 16,384 uses of one 64 KiB initializer: a 262 KB file whose folded
    // values copied each use (1 GiB each): `memplan import` held 8.4 GB for 61 s.
    let c = TensorProto {
        dims: vec![1 << 14],
        data_type: 1,
        name: "c".into(),
        raw_data: vec![0; 4 << 14],
        ..TensorProto::default()
    };
    let axis = AttributeProto {
        name: "axis".into(),
        r#type: 2,
        i: 0,
        ..AttributeProto::default()
    };
    let uses = vec!["c"; 1 << 14];
    let bytes =
        folded_then_gathered(c.clone(), 4, "Concat", &uses, vec![axis.clone()]).encode_to_vec();
    let limit = bytes.len() as u64 * BUDGET_PER_FILE_BYTE + BUDGET_SLACK;
    let start = std::time::Instant::now();
    let imported = import_bytes(&bytes, &ImportOptions::default()).unwrap();
    let elapsed = start.elapsed();
    for weight in &imported.graph.weights {
        let error = weight.value.as_ref().unwrap_err();
        assert!(
            error.contains(&format!(
                "it is computed by folded node `/fold/{}`",
                weight.source.replace('w', "Concat_")
            )) && error.contains(&format!(
                "past {limit} bytes together ({BUDGET_PER_FILE_BYTE} times its {} bytes",
                bytes.len()
            )) && error.contains("= help:"),
            "{error}"
        );
    }
    assert!(elapsed.as_secs() < 10, "{elapsed:?}");
    if let Some(peak) = peak_memory() {
        assert!(peak < 1 << 30, "peak memory {} MiB", peak >> 20);
    }
    // A few uses are fine: 16 of them, 1 MiB.
    let bytes = folded_then_gathered(c, 4, "Concat", &uses[..16], vec![axis]).encode_to_vec();
    let imported = import_bytes(&bytes, &ImportOptions::default()).unwrap();
    assert!(imported.graph.weights.iter().all(|w| w.value.is_ok()));
}

#[test]
fn issue_36_shape_inference_holds_a_bounded_multiple_of_the_file() {
    // 5,000 `Neg`s of one int64 initializer of 65,536 elements (the most whose values inference
    // computes): a 677 KB file for which inference kept 5,000 copies of the values, 2.6 GB
    // (12.7 s in a debug `memplan import`).
    let c = TensorProto {
        dims: vec![1 << 16],
        data_type: 7,
        name: "c".into(),
        raw_data: vec![0; 8 << 16],
        ..TensorProto::default()
    };
    let mut model = folded_then_gathered(c, 1, "Neg", &["c"], Vec::new());
    let graph = model.graph.as_mut().unwrap();
    graph.output[0] = value("y0", 7, &[Ok(1)]);
    for k in 1..5000 {
        let (name, out) = (format!("/fold/Neg_{k}"), format!("n{k}"));
        graph.node.push(node(&name, "Neg", &["c"], &[&out]));
    }
    let start = std::time::Instant::now();
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(imported.folded, 5000);
    assert!(elapsed.as_secs() < 10, "{elapsed:?}");
    if let Some(peak) = peak_memory() {
        assert!(peak < 1 << 30, "peak memory {} MiB", peak >> 20);
    }
}

#[test]
fn issue_36_model_names_the_module_cannot_have_are_suffixed_or_refused() {
    let bytes = tiny(Ok(1)).encode_to_vec();
    let import_as = |path: &str, name: Option<&str>| {
        let options = ImportOptions {
            name: name.map(str::to_owned),
            ..ImportOptions::default()
        };
        import(path, "model.toml", &bytes, &options)
    };
    // From the file's name: a crate or a primitive type gets `_model` (it was refused, asking
    // to rename the model, which has no name in the file to rename).
    for (path, name) in [
        ("models/u8.onnx", "u8_model"),
        ("std.onnx", "std_model"),
        ("memplan.onnx", "memplan_model"),
        ("Vec.onnx", "vec"),
        ("tiny.onnx", "tiny"),
    ] {
        assert_eq!(import_as(path, None).unwrap().model.name, name, "{path}");
    }
    // Given: refused, with a name that works (`Vec` was refused only by the model file's
    // parser, with a help line that did not say `--name`).
    for (given, why, suggested) in [
        ("Vec", "prelude", "--name vec"),
        ("u8", "primitive type", "--name u8_model"),
        ("memplan", "name of a crate", "--name memplan_model"),
    ] {
        let error = import_as("tiny.onnx", Some(given)).unwrap_err().message;
        assert!(
            error.contains(&format!("`{given}`"))
                && error.contains(why)
                && error.contains(suggested),
            "{error}"
        );
    }
}
