use std::path::PathBuf;

use memplan_core::{lower_bound, read_csv};
use prost::Message;

use super::proto::*;
use super::*;

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
fn missing_shapes_say_to_run_shape_inference() {
    let mut model = tiny(Ok(1));
    model.graph.as_mut().unwrap().value_info.remove(0);
    let error = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap_err();
    assert!(
        error.message.contains("`/add/Add_output_0` has no type"),
        "{error}"
    );
    assert!(error.message.contains("shape_inference"), "{error}");
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
