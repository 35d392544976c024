//! Several memory pools: a small fast memory (SRAM, TCM) filled first, larger slow ones after.
//!
//! Each pool is its own arena, planned on its own. Buffers may be bound to a pool; the others
//! are assigned by the planner, which fills the pools in order: a pool takes as much of the
//! remaining work as it can hold, measured in byte-steps (bytes x lifetime), before the rest
//! spills to the next pool.
//!
//! # Method
//! For each pool in order: plan the buffers bound to it (they must fit, or planning fails); then
//! offer it the unbound buffers, largest area first, each stacked at its lowest free offset, and
//! keep those that end below the pool's capacity. The kept set is then planned again with the
//! chosen solver, and the better of the two arrangements that fits is the pool's plan. A pool
//! without a capacity takes every buffer still unassigned.

use std::fmt;

use crate::bounds::lower_bound;
use crate::model::{Buffer, Plan, Problem};
use crate::solve::{Solution, SolveError, SolveOptions, solve};

/// One memory pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// The pool's name (a Rust identifier in model files).
    pub name: String,
    /// Most bytes the pool's arena may take; `None` for no limit.
    pub capacity: Option<u64>,
}

/// One pool's share of the problem and its plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolPlan {
    /// Indices (into the whole problem) of the buffers in this pool, in input order.
    pub buffers: Vec<usize>,
    /// Those buffers as a problem of their own (same order as `buffers`).
    pub problem: Problem,
    /// The plan of `problem`: offsets within this pool's arena.
    pub solution: Solution,
}

/// Every pool's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PooledPlan {
    /// `pool_of[i]` is the pool of buffer `i`.
    pub pool_of: Vec<usize>,
    /// One entry per pool, in the order given.
    pub pools: Vec<PoolPlan>,
}

impl PooledPlan {
    /// The pool and the offset within it of buffer `i`.
    pub fn location(&self, i: usize) -> (usize, u64) {
        let pool = self.pool_of[i];
        let plan = &self.pools[pool];
        let local = plan
            .buffers
            .binary_search(&i)
            .expect("every buffer is listed in its pool");
        (pool, plan.solution.plan.offsets[local])
    }
}

/// Why buffers could not be placed in the pools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// No pool was given.
    NoPools,
    /// A buffer is bound to a pool index that does not exist.
    NoSuchPool {
        /// The buffer.
        buffer: String,
        /// The pool index given.
        pool: usize,
        /// The number of pools.
        pools: usize,
    },
    /// The buffers bound to a pool do not fit its capacity.
    BoundBuffersOverflow {
        /// The pool's name.
        pool: String,
        /// Its capacity.
        capacity: u64,
        /// The smallest arena found for the bound buffers.
        needed: u64,
        /// Their lower bound.
        lower_bound: u64,
    },
    /// Some buffers fit in no pool.
    NothingFits {
        /// How many buffers are left.
        count: usize,
        /// The largest of them.
        largest: String,
        /// Its size.
        largest_size: u64,
        /// `name: used/capacity` per pool.
        usage: Vec<String>,
    },
    /// The solver failed on a pool's buffers.
    Solve(SolveError),
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoPools => {
                f.write_str("there are buffers to plan but no pool; declare at least one pool")
            }
            Self::NoSuchPool {
                buffer,
                pool,
                pools,
            } => write!(
                f,
                "buffer `{buffer}` names pool {pool}, but there are only {pools} pools"
            ),
            Self::BoundBuffersOverflow {
                pool,
                capacity,
                needed,
                lower_bound,
            } => write!(
                f,
                "pool `{pool}` holds {capacity} bytes, but the buffers bound to it need {needed} \
                 bytes (lower bound {lower_bound}); raise its capacity or let some of them spill \
                 (remove their pool binding)"
            ),
            Self::NothingFits {
                count,
                largest,
                largest_size,
                usage,
            } => write!(
                f,
                "{count} buffer(s) fit in no pool, the largest `{largest}` ({largest_size} bytes); \
                 the pools are full ({}); raise a capacity or add a pool without a limit",
                usage.join(", ")
            ),
            Self::Solve(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the solver error's own source (it has none).
            Self::Solve(e) => e.source(),
            _ => None,
        }
    }
}

impl From<SolveError> for PoolError {
    fn from(e: SolveError) -> Self {
        Self::Solve(e)
    }
}

/// Assigns buffers to pools and plans each pool. `bound[i]` is `Some(pool)` when buffer `i` must go
/// to that pool. Pinned offsets are offsets within the buffer's pool; a pinned buffer with no
/// binding goes to the first pool.
pub fn plan_pools(
    problem: &Problem,
    pools: &[Pool],
    bound: &[Option<usize>],
    options: &SolveOptions,
) -> Result<PooledPlan, PoolError> {
    if pools.is_empty() {
        return if problem.is_empty() {
            Ok(PooledPlan {
                pool_of: Vec::new(),
                pools: Vec::new(),
            })
        } else {
            Err(PoolError::NoPools)
        };
    }
    let buffers = problem.buffers();
    let binding = |i: usize| -> Option<usize> {
        bound
            .get(i)
            .copied()
            .flatten()
            .or(buffers[i].fixed_offset.map(|_| 0))
    };
    for (i, buffer) in buffers.iter().enumerate() {
        if let Some(pool) = binding(i).filter(|&p| p >= pools.len()) {
            return Err(PoolError::NoSuchPool {
                buffer: buffer.id.clone(),
                pool,
                pools: pools.len(),
            });
        }
    }

    let mut pool_of: Vec<Option<usize>> = (0..buffers.len()).map(|_| None).collect();
    let mut plans = Vec::with_capacity(pools.len());
    // Unbound buffers in the order pools are offered them: most byte-steps first.
    let mut offers: Vec<usize> = (0..buffers.len())
        .filter(|&i| binding(i).is_none())
        .collect();
    offers.sort_by_key(|&i| (std::cmp::Reverse(buffers[i].area()), i));

    for (p, pool) in pools.iter().enumerate() {
        let mut members: Vec<usize> = (0..buffers.len())
            .filter(|&i| binding(i) == Some(p))
            .collect();
        let unassigned: Vec<usize> = offers
            .iter()
            .copied()
            .filter(|&i| pool_of[i].is_none())
            .collect();
        let plan = match pool.capacity {
            None => {
                members.extend(unassigned);
                members.sort_unstable();
                let sub = subproblem(problem, &members);
                let solution = solve(&sub, options)?;
                PoolPlan {
                    buffers: members,
                    problem: sub,
                    solution,
                }
            }
            Some(capacity) => fill_pool(problem, pool, capacity, members, &unassigned, options)?,
        };
        for &i in &plan.buffers {
            pool_of[i] = Some(p);
        }
        plans.push(plan);
    }

    let left: Vec<usize> = (0..buffers.len())
        .filter(|&i| pool_of[i].is_none())
        .collect();
    if let Some(&largest) = left
        .iter()
        .max_by_key(|&&i| (buffers[i].size, std::cmp::Reverse(i)))
    {
        let usage = pools
            .iter()
            .zip(&plans)
            .map(|(pool, plan)| {
                let used = plan.solution.plan.arena_size;
                match pool.capacity {
                    Some(c) => format!("{}: {used}/{c} bytes", pool.name),
                    None => format!("{}: {used} bytes", pool.name),
                }
            })
            .collect();
        return Err(PoolError::NothingFits {
            count: left.len(),
            largest: buffers[largest].id.clone(),
            largest_size: buffers[largest].size,
            usage,
        });
    }
    Ok(PooledPlan {
        pool_of: pool_of
            .into_iter()
            .map(|p| p.expect("checked above"))
            .collect(),
        pools: plans,
    })
}

/// Plans the bound `members` of a limited pool, then adds offered buffers while they fit.
fn fill_pool(
    problem: &Problem,
    pool: &Pool,
    capacity: u64,
    mut members: Vec<usize>,
    offers: &[usize],
    options: &SolveOptions,
) -> Result<PoolPlan, PoolError> {
    let buffers = problem.buffers();
    let bound_problem = subproblem(problem, &members);
    let fit_options = SolveOptions {
        capacity: Some(capacity),
        ..options.clone()
    };
    let bound_solution = solve(&bound_problem, &fit_options)?;
    if bound_solution.plan.arena_size > capacity {
        return Err(PoolError::BoundBuffersOverflow {
            pool: pool.name.clone(),
            capacity,
            needed: bound_solution.plan.arena_size,
            lower_bound: lower_bound(&bound_problem),
        });
    }

    // Greedy fill: the bound buffers stay where their plan put them (as pins); each offered buffer
    // goes to its lowest free offset and stays if it ends within the capacity.
    let mut placed: Vec<Buffer> = members
        .iter()
        .zip(&bound_solution.plan.offsets)
        .map(|(&i, &offset)| buffers[i].clone().with_fixed_offset(offset))
        .collect();
    let mut greedy_offsets = bound_solution.plan.offsets.clone();
    for &i in offers {
        let offset = lowest_fit_among(&placed, &buffers[i]);
        if offset + buffers[i].size <= capacity {
            placed.push(buffers[i].clone().with_fixed_offset(offset));
            greedy_offsets.push(offset);
            members.push(i);
        }
    }

    // Order members by index and re-plan them freely; keep the better arrangement that fits.
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by_key(|&k| members[k]);
    let members: Vec<usize> = order.iter().map(|&k| members[k]).collect();
    let greedy_offsets: Vec<u64> = order.iter().map(|&k| greedy_offsets[k]).collect();
    let sub = subproblem(problem, &members);
    let greedy_plan = Plan::from_offsets(&sub, greedy_offsets);
    let replanned = solve(&sub, &fit_options)?;
    let solution = if replanned.plan.arena_size <= greedy_plan.arena_size {
        replanned
    } else {
        let optimal = greedy_plan.arena_size == lower_bound(&sub);
        Solution {
            plan: greedy_plan,
            optimal,
            nodes: replanned.nodes,
            solver: replanned.solver,
        }
    };
    Ok(PoolPlan {
        buffers: members,
        problem: sub,
        solution,
    })
}

/// The lowest offset (aligned for `new`) where `new` overlaps none of `placed` that is live at
/// the same time. `O(k log k)` for `k` placed buffers.
fn lowest_fit_among(placed: &[Buffer], new: &Buffer) -> u64 {
    let mut blocking: Vec<(u64, u64)> = placed
        .iter()
        .filter(|b| b.lifetime.overlaps(&new.lifetime))
        .map(|b| {
            let offset = b.fixed_offset.expect("placed buffers carry their offset");
            (offset, offset + b.size)
        })
        .collect();
    blocking.sort_unstable();
    let mut cursor = 0;
    for (start, end) in blocking {
        let candidate = crate::model::align_up(cursor, new.alignment);
        if candidate + new.size <= start {
            return candidate;
        }
        cursor = cursor.max(end);
    }
    crate::model::align_up(cursor, new.alignment)
}

/// The buffers `indices` of `problem` as a problem of their own.
fn subproblem(problem: &Problem, indices: &[usize]) -> Problem {
    Problem::new(
        indices
            .iter()
            .map(|&i| problem.buffers()[i].clone())
            .collect(),
    )
    .expect("a subset of a valid problem is valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::Solver;
    use crate::validate::validate;

    fn options() -> SolveOptions {
        SolveOptions {
            solver: Solver::BestFit,
            ..SolveOptions::default()
        }
    }

    fn pools(fast: u64) -> Vec<Pool> {
        vec![
            Pool {
                name: "sram".into(),
                capacity: Some(fast),
            },
            Pool {
                name: "dram".into(),
                capacity: None,
            },
        ]
    }

    fn problem() -> Problem {
        Problem::new(vec![
            Buffer::new("big_short", 100, 0, 1),
            Buffer::new("small_long", 10, 0, 10),
            Buffer::new("mid", 40, 1, 5),
            Buffer::new("tail", 40, 5, 10),
        ])
        .unwrap()
    }

    fn check(problem: &Problem, plan: &PooledPlan, pools: &[Pool]) {
        for (pool, p) in pools.iter().zip(&plan.pools) {
            assert_eq!(validate(&p.problem, &p.solution.plan), vec![]);
            if let Some(c) = pool.capacity {
                assert!(p.solution.plan.arena_size <= c);
            }
        }
        let mut all: Vec<usize> = plan.pools.iter().flat_map(|p| p.buffers.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..problem.len()).collect::<Vec<_>>());
    }

    #[test]
    fn fast_pool_takes_the_most_byte_steps_it_can_hold() {
        let p = problem();
        let pools = pools(50);
        let plan = plan_pools(&p, &pools, &[None; 4], &options()).unwrap();
        check(&p, &plan, &pools);
        // Areas: big_short 100, small_long 100, mid 160, tail 200. The 50-byte pool holds tail,
        // mid (they never meet) and small_long beside them; big_short spills.
        assert_eq!(plan.pools[0].buffers, vec![1, 2, 3]);
        assert_eq!(plan.pools[1].buffers, vec![0]);
        assert_eq!(plan.location(0), (1, 0));
    }

    #[test]
    fn bound_buffers_stay_in_their_pool() {
        let p = problem();
        let pools = pools(200);
        let bound = [None, Some(1), None, None];
        let plan = plan_pools(&p, &pools, &bound, &options()).unwrap();
        check(&p, &plan, &pools);
        assert_eq!(plan.pool_of, vec![0, 1, 0, 0]);
    }

    #[test]
    fn overfull_pools_fail_with_numbers() {
        let p = problem();
        let bound = [Some(0), None, None, None];
        let err = plan_pools(&p, &pools(64), &bound, &options()).unwrap_err();
        assert_eq!(
            err,
            PoolError::BoundBuffersOverflow {
                pool: "sram".into(),
                capacity: 64,
                needed: 100,
                lower_bound: 100
            }
        );
        let only_fast = vec![Pool {
            name: "sram".into(),
            capacity: Some(50),
        }];
        let err = plan_pools(&p, &only_fast, &[None; 4], &options()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("1 buffer(s) fit in no pool"), "{message}");
        assert!(message.contains("`big_short` (100 bytes)"), "{message}");
        assert!(message.contains("sram: 50/50 bytes"), "{message}");
    }

    #[test]
    fn pinned_buffers_keep_their_offset_in_the_first_pool() {
        let p = Problem::new(vec![
            Buffer::new("dma", 16, 0, 10).with_fixed_offset(0),
            Buffer::new("x", 16, 0, 10),
        ])
        .unwrap();
        let pools = pools(32);
        let plan = plan_pools(&p, &pools, &[None, None], &options()).unwrap();
        check(&p, &plan, &pools);
        assert_eq!(plan.location(0), (0, 0));
        assert_eq!(plan.location(1), (0, 16));
    }
}
