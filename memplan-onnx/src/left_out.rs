//! Optional outputs left out before one that is used (an `LSTM` whose `Y` is `""` while its
//! `Y_h` is read, as some converters write it): the kernels take a node's outputs by position,
//! so such an output gets a value of its own, named after its node, that nothing reads. The
//! planner gives it its bytes for the node's step only.

use std::collections::BTreeSet;

use crate::proto;

/// Names every output of `graph`'s nodes that is left out (`""`) before a named one, with a name
/// no other value of the graph has: `<node>:output<i>` (or `<op_type>_<k>:output<i>` for an
/// unnamed node), a number appended on a clash.
pub(crate) fn name_left_out_outputs(graph: &mut proto::GraphProto) {
    let mut taken: BTreeSet<String> = graph
        .input
        .iter()
        .chain(&graph.output)
        .chain(&graph.value_info)
        .map(|v| v.name.clone())
        .chain(graph.initializer.iter().map(|t| t.name.clone()))
        .chain(graph.node.iter().flat_map(|n| n.output.iter().cloned()))
        .collect();
    for (k, node) in graph.node.iter_mut().enumerate() {
        let Some(last) = node.output.iter().rposition(|o| !o.is_empty()) else {
            continue;
        };
        let label = if node.name.is_empty() {
            format!("{}_{k}", node.op_type)
        } else {
            node.name.clone()
        };
        for (i, output) in node.output[..last].iter_mut().enumerate() {
            if !output.is_empty() {
                continue;
            }
            let base = format!("{label}:output{i}");
            let mut name = base.clone();
            let mut n = 1;
            while taken.contains(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(name.clone());
            *output = name;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, outputs: &[&str]) -> proto::NodeProto {
        proto::NodeProto {
            name: name.to_owned(),
            op_type: "LSTM".to_owned(),
            output: outputs.iter().map(|&o| o.to_owned()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn only_outputs_before_a_named_one_get_a_fresh_name() {
        let mut graph = proto::GraphProto {
            node: vec![
                node("a", &["", "h", ""]),
                node("", &["", "", "c"]),
                node("b", &["y", "", ""]),
                // A value already named like the first fresh name.
                node("c", &["a:output0"]),
            ],
            ..Default::default()
        };
        name_left_out_outputs(&mut graph);
        let outputs: Vec<Vec<&str>> = graph
            .node
            .iter()
            .map(|n| n.output.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(outputs[0], ["a:output0_1", "h", ""]);
        assert_eq!(outputs[1], ["LSTM_1:output0", "LSTM_1:output1", "c"]);
        assert_eq!(outputs[2], ["y", "", ""]);
    }
}
