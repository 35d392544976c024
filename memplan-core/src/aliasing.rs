//! In-place aliasing: buffers that share the same bytes on purpose, planned as one rectangle.
//!
//! An elementwise op (`Relu`, `Add`) or a reshape-like op can write its output over an input
//! that nobody reads afterwards. The input and the output then form an *alias chain*: one
//! rectangle as tall as the largest member and as wide as the union of their lifetimes. The
//! planner packs the chains; every member of a chain gets the chain's offset.
//!
//! ```text
//!  address                          address
//!     ^   +------+                     ^
//!     |   | relu |                     |   +-------------+
//!     +---+--+---+                     |   | conv = relu |
//!     | conv |            ==>          +---+-------------+
//!     +------+-----> step              +-----------------> step
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::model::{Buffer, Lifetime, Plan, Problem, ProblemError};
use crate::validate::{Violation, validate};

/// Which buffers share memory: a partition of the buffers into alias chains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasGroups {
    /// `group_of[i]` is the chain of buffer `i`, an index into `members`.
    group_of: Vec<usize>,
    /// The buffers of each chain, in input order; singletons for unaliased buffers.
    members: Vec<Vec<usize>>,
}

/// Why a set of aliases cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AliasError {
    /// An alias names a buffer index that does not exist.
    NoSuchBuffer {
        /// The index given.
        index: usize,
        /// The number of buffers.
        buffers: usize,
    },
    /// Two members of one chain are pinned at different offsets.
    ConflictingPins {
        /// One pinned member.
        first: String,
        /// Another, pinned elsewhere.
        second: String,
    },
    /// The merged rectangle is not a valid buffer (should not happen for valid inputs).
    Problem(ProblemError),
}

impl fmt::Display for AliasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchBuffer { index, buffers } => write!(
                f,
                "alias refers to buffer {index}, but there are only {buffers} buffers"
            ),
            Self::ConflictingPins { first, second } => write!(
                f,
                "`{first}` and `{second}` share memory (in-place alias) but are pinned at \
                 different offsets; pin only one of them"
            ),
            Self::Problem(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for AliasError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the problem's own source (it has none).
            Self::Problem(e) => e.source(),
            _ => None,
        }
    }
}

impl From<ProblemError> for AliasError {
    fn from(e: ProblemError) -> Self {
        Self::Problem(e)
    }
}

impl AliasGroups {
    /// Groups buffers connected by `pairs` (each `(output, input)`: the output reuses the input's
    /// bytes). Chains may be long (`a -> b -> c`) and may branch.
    pub fn new(buffers: usize, pairs: &[(usize, usize)]) -> Result<Self, AliasError> {
        let mut parent: Vec<usize> = (0..buffers).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for &(a, b) in pairs {
            for index in [a, b] {
                if index >= buffers {
                    return Err(AliasError::NoSuchBuffer { index, buffers });
                }
            }
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            // The smaller index becomes the root so the grouping does not depend on pair order.
            let (low, high) = (ra.min(rb), ra.max(rb));
            parent[high] = low;
        }
        let mut group_of_root: BTreeMap<usize, usize> = BTreeMap::new();
        let mut group_of = Vec::with_capacity(buffers);
        let mut members: Vec<Vec<usize>> = Vec::new();
        for i in 0..buffers {
            let r = root(&mut parent, i);
            let group = *group_of_root.entry(r).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[group].push(i);
            group_of.push(group);
        }
        Ok(Self { group_of, members })
    }

    /// No aliasing: every buffer on its own.
    pub fn none(buffers: usize) -> Self {
        Self::new(buffers, &[]).expect("no pairs, no errors")
    }

    /// The chain of buffer `i`.
    pub fn group_of(&self, i: usize) -> usize {
        self.group_of[i]
    }

    /// The buffers of each chain.
    pub fn groups(&self) -> &[Vec<usize>] {
        &self.members
    }

    /// Whether buffers `a` and `b` share memory on purpose.
    pub fn same_group(&self, a: usize, b: usize) -> bool {
        self.group_of[a] == self.group_of[b]
    }

    /// One buffer per chain: as large as its largest member, live from the first member's start
    /// to the last member's end, aligned for every member, pinned where a member is pinned.
    /// Named after the chain's first member.
    pub fn merge(&self, problem: &Problem) -> Result<Problem, AliasError> {
        let buffers = problem.buffers();
        let mut merged = Vec::with_capacity(self.members.len());
        for members in &self.members {
            let first = &buffers[members[0]];
            let mut chain = Buffer {
                id: first.id.clone(),
                size: 0,
                lifetime: Lifetime::new(u64::MAX, 0),
                alignment: 1,
                fixed_offset: None,
            };
            let mut pinned_by: Option<&Buffer> = None;
            for &i in members {
                let b = &buffers[i];
                chain.size = chain.size.max(b.size);
                chain.lifetime.start = chain.lifetime.start.min(b.lifetime.start);
                chain.lifetime.end = chain.lifetime.end.max(b.lifetime.end);
                chain.alignment = chain.alignment.max(b.alignment);
                if let Some(pin) = b.fixed_offset {
                    match pinned_by {
                        Some(other) if other.fixed_offset != Some(pin) => {
                            return Err(AliasError::ConflictingPins {
                                first: other.id.clone(),
                                second: b.id.clone(),
                            });
                        }
                        _ => {
                            pinned_by = Some(b);
                            chain.fixed_offset = Some(pin);
                        }
                    }
                }
            }
            merged.push(chain);
        }
        Ok(Problem::new(merged)?)
    }

    /// Spreads a plan of the merged problem back to every member: each gets its chain's offset.
    pub fn expand(&self, problem: &Problem, merged_plan: &Plan) -> Plan {
        let offsets = self
            .group_of
            .iter()
            .map(|&g| merged_plan.offsets[g])
            .collect();
        Plan::from_offsets(problem, offsets)
    }

    /// Every violation of `plan`, except overlaps between members of one chain (those share
    /// memory on purpose). Members of a chain must still start at the same offset.
    pub fn validate(&self, problem: &Problem, plan: &Plan) -> Vec<Violation> {
        let mut violations: Vec<Violation> = validate(problem, plan)
            .into_iter()
            .filter(|v| match *v {
                Violation::Overlap { first, second } => !self.same_group(first, second),
                _ => true,
            })
            .collect();
        for members in &self.members {
            for pair in members.windows(2) {
                if plan.offsets.get(pair[0]) != plan.offsets.get(pair[1]) {
                    violations.push(Violation::Overlap {
                        first: pair[0],
                        second: pair[1],
                    });
                }
            }
        }
        violations.sort();
        violations
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::{SolveOptions, Solver, solve};

    /// conv [0,2) -> relu writes over conv at step 1 -> reshape over relu at step 2; other is live
    /// throughout.
    fn chain_problem() -> Problem {
        Problem::new(vec![
            Buffer::new("conv", 64, 0, 2),
            Buffer::new("relu", 64, 1, 3),
            Buffer::new("reshape", 64, 2, 4).with_alignment(16),
            Buffer::new("other", 32, 0, 4),
        ])
        .unwrap()
    }

    #[test]
    fn chains_merge_into_one_rectangle() {
        let problem = chain_problem();
        let groups = AliasGroups::new(4, &[(2, 1), (1, 0)]).unwrap();
        assert_eq!(groups.groups(), &[vec![0, 1, 2], vec![3]]);
        let merged = groups.merge(&problem).unwrap();
        assert_eq!(
            merged.buffers()[0],
            Buffer::new("conv", 64, 0, 4).with_alignment(16)
        );
        assert_eq!(crate::lower_bound(&merged), 96);
        // Without aliasing the peak is conv + relu + other = 160.
        assert_eq!(crate::lower_bound(&problem), 160);
    }

    #[test]
    fn expanded_plan_validates_with_aliases_only() {
        let problem = chain_problem();
        let groups = AliasGroups::new(4, &[(1, 0), (2, 1)]).unwrap();
        let merged = groups.merge(&problem).unwrap();
        let options = SolveOptions {
            solver: Solver::BestFit,
            ..SolveOptions::default()
        };
        let plan = groups.expand(&problem, &solve(&merged, &options).unwrap().plan);
        assert_eq!(plan.arena_size, 96);
        assert_eq!(groups.validate(&problem, &plan), vec![]);
        // The plain check sees the intended sharing as overlaps.
        assert!(!validate(&problem, &plan).is_empty());
        // Moving one member away from its chain is reported.
        let mut broken = plan.clone();
        broken.offsets[1] += 16;
        assert!(!groups.validate(&problem, &broken).is_empty());
    }

    #[test]
    fn conflicting_pins_are_rejected() {
        let problem = Problem::new(vec![
            Buffer::new("a", 8, 0, 2).with_fixed_offset(0),
            Buffer::new("b", 8, 1, 3).with_fixed_offset(8),
        ])
        .unwrap();
        let groups = AliasGroups::new(2, &[(1, 0)]).unwrap();
        assert!(matches!(
            groups.merge(&problem),
            Err(AliasError::ConflictingPins { .. })
        ));
        assert!(matches!(
            AliasGroups::new(2, &[(1, 5)]),
            Err(AliasError::NoSuchBuffer { index: 5, .. })
        ));
    }

    #[test]
    fn grouping_does_not_depend_on_pair_order() {
        let a = AliasGroups::new(5, &[(4, 2), (2, 0), (3, 1)]).unwrap();
        let b = AliasGroups::new(5, &[(3, 1), (0, 2), (2, 4)]).unwrap();
        assert_eq!(a, b);
    }
}
