//! A network checked and planned ([`crate::prepare::finish`], or one schedule of
//! [`crate::ram_budget`] tried), before its constants are attached.

use std::path::PathBuf;

use memplan_core::Model;
use memplan_core::model_plan::ModelPlan;

use crate::graph::{Constant, FuseReport, Node, Prepared};

/// A network checked and planned, before its constants are attached.
pub(crate) struct Planned {
    pub(crate) model: Model,
    pub(crate) plan: ModelPlan,
    pub(crate) toml: String,
    pub(crate) shapes: Vec<Vec<u64>>,
    pub(crate) values: usize,
    pub(crate) nodes: Vec<Node>,
    pub(crate) table_nodes: Vec<Node>,
    pub(crate) bound_without_sharing: u64,
    pub(crate) sum_of_sizes: u64,
}

impl Planned {
    /// The prepared network with its `constants` (what `OpInput::Weight` indexes) and the
    /// `files` read besides the model.
    pub(crate) fn with(
        self,
        constants: Vec<Constant>,
        files: Vec<PathBuf>,
        fused: FuseReport,
    ) -> Prepared {
        Prepared {
            fused,
            model: self.model,
            plan: self.plan,
            toml: self.toml,
            shapes: self.shapes,
            values: self.values,
            nodes: self.nodes,
            table_nodes: self.table_nodes,
            constants,
            files,
            bound_without_sharing: self.bound_without_sharing,
            sum_of_sizes: self.sum_of_sizes,
        }
    }
}
