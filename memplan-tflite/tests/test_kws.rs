//! Reads the MLPerf Tiny keyword spotter in `../shared/bench/tinyml` (float32 and int8): its
//! operators, options, quantization and activations as the benchmark's README lists them.
//! Skipped with a message when `../shared` is absent.

use std::path::PathBuf;

fn shared(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/bench/tinyml")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        println!("skipped: {} is absent", path.display());
        None
    }
}

#[test]
fn the_int8_keyword_spotter_reads_as_the_benchmark_describes_it() {
    let Some(path) = shared("kws_ref_model.tflite") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let graph = memplan_tflite::read("kws_ref_model.tflite", &bytes).unwrap();
    for op in &graph.operators {
        println!(
            "{} {:?} -> {:?} {:?}",
            op.label(),
            op.inputs,
            op.outputs,
            op.options
        );
    }
    for t in &graph.tensors {
        println!(
            "{} {} {:?} {:?} data {:?}",
            t.index,
            t.name,
            t.element,
            t.shape,
            t.data.as_ref().map(|d| d.len())
        );
        if let Some(q) = &t.quantization {
            println!(
                "   q {:?} zp {:?} axis {}",
                &q.scale[..q.scale.len().min(3)],
                &q.zero_point[..q.zero_point.len().min(3)],
                q.axis
            );
        }
    }
    let names: Vec<&str> = graph.operators.iter().map(|o| o.name).collect();
    assert_eq!(
        graph.operators[0].options,
        memplan_tflite::Options::Conv2D {
            padding: memplan_tflite::Padding::Same,
            stride: [2, 2],
            dilation: [1, 1],
            activation: memplan_tflite::Activation::Relu,
        }
    );
    // Per-channel weights (axis 0 of a CONV_2D filter, 3 of a DEPTHWISE_CONV_2D one).
    let filter = &graph.tensors[graph.operators[1].inputs[1].unwrap()];
    let q = filter.quantization.as_ref().unwrap();
    assert_eq!((q.scale.len(), q.axis), (64, 3));
    assert_eq!(graph.operators.len(), 13);
    assert_eq!(names.iter().filter(|&&n| n == "CONV_2D").count(), 5);
    assert_eq!(
        names.iter().filter(|&&n| n == "DEPTHWISE_CONV_2D").count(),
        4
    );
    let input = &graph.tensors[graph.inputs[0]];
    assert_eq!(input.shape, [1, 49, 10, 1]);
    assert_eq!(input.element, memplan_tflite::ElementType::I8);
    let q = input.quantization.as_ref().unwrap();
    assert_eq!(q.zero_point, [83]);
    let imported = memplan_tflite::import(
        "kws_ref_model.tflite",
        "kws.toml",
        &bytes,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(imported.model.tensors.len(), 14);
    let sum: u64 = imported.model.tensors.iter().map(|t| t.size).sum();
    assert_eq!(sum, 72642);
}

#[test]
fn the_float_keyword_spotter_reads() {
    let Some(path) = shared("kws_ref_model_float32.tflite") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let graph = memplan_tflite::read("kws_ref_model_float32.tflite", &bytes).unwrap();
    // A hybrid model: int8 CONV_2D weights with one scale, float32 activations.
    let filter = &graph.tensors[graph.operators[0].inputs[1].unwrap()];
    assert_eq!(filter.element, memplan_tflite::ElementType::I8);
    assert!(filter.quantization.as_ref().unwrap().per_tensor());
    for op in &graph.operators {
        println!(
            "{} {:?} -> {:?} {:?}",
            op.label(),
            op.inputs,
            op.outputs,
            op.options
        );
    }
    for t in &graph.tensors {
        println!(
            "{} {} {:?} {:?} data {:?}",
            t.index,
            t.name,
            t.element,
            t.shape,
            t.data.as_ref().map(|d| d.len())
        );
        if let Some(q) = &t.quantization {
            println!(
                "   q {:?} zp {:?} axis {}",
                &q.scale[..q.scale.len().min(3)],
                &q.zero_point[..q.zero_point.len().min(3)],
                q.axis
            );
        }
    }
    let imported = memplan_tflite::import(
        "kws_ref_model_float32.tflite",
        "kws.toml",
        &bytes,
        &Default::default(),
    )
    .unwrap();
    let sum: u64 = imported.model.tensors.iter().map(|t| t.size).sum();
    assert_eq!(sum, 290568);
}
