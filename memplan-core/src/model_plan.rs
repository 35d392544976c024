//! Planning a parsed model: in-place chains, pools, pins and app-owned tensors, its solver and its
//! budget, with errors located in the model file. It generates nothing: [`crate::codegen`]
//! turns its [`ModelPlan`] into Rust (and re-exports these items beside that), `memplan plan`
//! prints it, an embedded planner calls it with the `model-file` feature alone.

use crate::aliasing::AliasGroups;
use crate::bounds::{live_at, lower_bound, peak_step};
use crate::error::InputError;
use crate::model::{Buffer, Plan, Problem, align_up};
use crate::model_file::{Location, Model, format_byte_size};
use crate::pools::{Pool, PoolError, plan_pools};
use crate::solve::{Solution, SolveError, SolveOptions, Solver, solve};
use crate::validate::Violation;

/// How many of the largest live tensors a budget error names.
const NAMED_IN_BUDGET_ERROR: usize = 5;

/// The plan of a whole model: one arena per pool, a place for every arena tensor, and the chains
/// of tensors that share memory in place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelPlan {
    /// One entry per pool: the model's `[[pools]]` in order, or one default pool (named
    /// `"arena"`, [`PlannedPool::default`] set) when the model declares none.
    pub pools: Vec<PlannedPool>,
    /// `tensors[i]`: the pool and offset of tensor `i`; `None` for an `external` tensor.
    pub tensors: Vec<Option<TensorPlace>>,
    /// Chains of at least two tensors that share one rectangle (in-place ops), each in tensor
    /// order; every member has the same pool and offset.
    pub chains: Vec<Vec<usize>>,
    /// The *bound without sharing*: the most bytes of arena tensors live at one step when every
    /// tensor has bytes of its own (no in-place chains), over all pools together. Plans with
    /// in-place ops go below it; it is not what a plan is measured against (that is
    /// [`PlannedPool::lower_bound`]). `memplan import` prints it.
    pub lower_bound_without_aliasing: u64,
}

/// A model's two lower bounds, without planning it (see [`lower_bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowerBounds {
    /// The *bound without sharing*: every arena tensor its own bytes, the most bytes live at
    /// one step ([`ModelPlan::lower_bound_without_aliasing`]).
    pub without_sharing: u64,
    /// The *lower bound*: the same with each in-place chain counted once (its largest member,
    /// live from the chain's first step to its last), alignment padding ignored. For a model
    /// without `[[pools]]` it is the generated `LOWER_BOUND` and what the arena is measured
    /// against; with pools, each pool's `LOWER_BOUND` is this bound of its own tensors, and
    /// their sum is at least this.
    pub chains_merged: u64,
}

/// The model's [`LowerBounds`]: the bounds [`plan_model`] reports, without running a solver.
/// App-owned (`external`) tensors are not in the arena and count in neither.
///
/// # Runtime
/// `O(n log n)` for `n` tensors.
pub fn lower_bounds(model: &Model) -> Result<LowerBounds, InputError> {
    let prepared = prepare(model)?;
    Ok(LowerBounds {
        without_sharing: lower_bound(&prepared.problem),
        chains_merged: lower_bound(&prepared.merged),
    })
}

/// The plan of one pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPool {
    /// Its name (`"arena"` for the default pool).
    pub name: String,
    /// `true` for the single pool of a model without `[[pools]]`.
    pub default: bool,
    /// Its `size` limit, if any.
    pub capacity: Option<u64>,
    /// Its `link_section`, if any.
    pub link_section: Option<String>,
    /// The tensors in it (model indices, in model order).
    pub tensors: Vec<usize>,
    /// Bytes of its arena: the plan's height rounded up to `alignment`.
    pub arena_size: u64,
    /// Alignment of its arena: the largest alignment of its tensors, at least the model's.
    pub alignment: u64,
    /// Its *lower bound*: the most bytes live at one step in it, each in-place chain counted
    /// once (one rectangle), alignment padding ignored; the generated `LOWER_BOUND`. The arena
    /// is measured against it; with padding, an optimal plan can be above it.
    pub lower_bound: u64,
    /// The solver whose plan it uses.
    pub solver: Solver,
    /// Whether its plan is proven smallest.
    pub optimal: bool,
}

/// Where an arena tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorPlace {
    /// Index into [`ModelPlan::pools`].
    pub pool: usize,
    /// Byte offset in that pool's arena.
    pub offset: u64,
}

impl PlannedPool {
    /// How many of its tensors are pinned at a fixed `offset`.
    pub fn pinned_count(&self, model: &Model) -> usize {
        self.tensors
            .iter()
            .filter(|&&i| model.tensors[i].memory.offset.is_some())
            .count()
    }
}

impl ModelPlan {
    /// The offset of tensor `i` in its pool (0 for an external tensor).
    pub fn offset(&self, i: usize) -> u64 {
        self.tensors[i].map_or(0, |p| p.offset)
    }

    /// The chain tensor `i` belongs to, if it shares memory with another tensor.
    pub fn chain_of(&self, i: usize) -> Option<&[usize]> {
        self.chains
            .iter()
            .find(|c| c.contains(&i))
            .map(Vec::as_slice)
    }

    /// Total bytes of all pools' arenas.
    pub fn total_arena_size(&self) -> u64 {
        self.pools.iter().map(|p| p.arena_size).sum()
    }
}

/// What the planner works on: arena tensors as buffers, and the chains merged.
struct Prepared {
    /// Model index of each arena buffer.
    arena: Vec<usize>,
    /// The arena tensors as buffers (pins within their pool).
    problem: Problem,
    groups: AliasGroups,
    /// One buffer per chain.
    merged: Problem,
}

fn prepare(model: &Model) -> Result<Prepared, InputError> {
    let arena: Vec<usize> = (0..model.tensors.len())
        .filter(|&i| !model.tensors[i].memory.external)
        .collect();
    let mut position = vec![usize::MAX; model.tensors.len()];
    for (k, &i) in arena.iter().enumerate() {
        position[i] = k;
    }
    let buffers = arena
        .iter()
        .map(|&i| {
            let t = &model.tensors[i];
            let b = Buffer::new(t.name.clone(), t.size, t.lifetime.start, t.lifetime.end)
                .with_alignment(t.alignment);
            match t.memory.offset {
                Some(offset) => b.with_fixed_offset(offset),
                None => b,
            }
        })
        .collect();
    let problem = Problem::new(buffers).map_err(|e| model_error(model, format!("{e}")))?;
    let pairs: Vec<(usize, usize)> = model
        .aliases
        .iter()
        .map(|a| (position[a.output], position[a.input]))
        .collect();
    let groups =
        AliasGroups::new(arena.len(), &pairs).map_err(|e| model_error(model, format!("{e}")))?;
    let merged = groups
        .merge(&problem)
        .map_err(|e| model_error(model, format!("{e}")))?;
    Ok(Prepared {
        arena,
        problem,
        groups,
        merged,
    })
}

/// An error at `[model]` for what the parser's checks should already have caught.
fn model_error(model: &Model, message: String) -> InputError {
    at(
        model,
        model.locations.model,
        format!("the planner failed: {message}"),
        "check the pins, pools and `inplace` entries named here",
    )
}

/// The largest arena (one pool's, or the model's) memplan generates: 2^40 bytes (1 TiB).
///
/// A pool's arena is a `static`, and `rustc` reserves the whole size of a `static` in its own
/// memory to compile it, even one it does not build (the bytes of a `memplan::Memory` are
/// uninitialised to it, and cost it about 0.4 s per GiB on Linux, untouched): 2^47
/// bytes and up are more than any 64-bit host can reserve (`rustc`'s unlocated "tried to
/// allocate more memory than available to compiler"), and 1 TiB already takes minutes. A
/// single arena is held to the same limit so that adding a pool never turns an accepted model
/// into a refused one.
pub const MAX_ARENA_BYTES: u64 = 1 << 40;

/// `pool`'s arena is above [`MAX_ARENA_BYTES`]: located at a pin that ends past the limit, else
/// at the pool's largest tensor.
fn arena_too_large(
    model: &Model,
    pool: &PlannedPool,
    places: &[Option<TensorPlace>],
) -> InputError {
    let pin = pool
        .tensors
        .iter()
        .filter_map(|&i| {
            let offset = model.tensors[i].memory.offset?;
            let end = places[i].map_or(offset, |p| p.offset) + model.tensors[i].size;
            (end > MAX_ARENA_BYTES).then_some((end, i))
        })
        .max();
    let largest = pool
        .tensors
        .iter()
        .map(|&i| (model.tensors[i].size, std::cmp::Reverse(i)))
        .max()
        .map(|(_, std::cmp::Reverse(i))| i);
    let arena = if pool.default {
        "the arena".to_owned()
    } else {
        format!("pool `{}`'s arena", pool.name)
    };
    let (location, because) = match (pin, largest) {
        (Some((end, i)), _) => {
            let t = &model.tensors[i];
            let offset = end - t.size;
            (
                t.location,
                format!(
                    " (`{}`, {} bytes pinned at offset {offset}, ends at byte {end})",
                    t.name, t.size
                ),
            )
        }
        (None, Some(i)) => {
            let t = &model.tensors[i];
            (
                t.location,
                format!(" (its largest tensor: `{}`, {} bytes)", t.name, t.size),
            )
        }
        (None, None) => (model.locations.model, String::new()),
    };
    at(
        model,
        location,
        format!(
            "{arena} would be {} bytes ({}){because}, more than the {MAX_ARENA_BYTES} bytes \
             ({}) memplan generates: the compiler reserves an arena's whole size to compile its \
             `static`",
            pool.arena_size,
            format_byte_size(pool.arena_size),
            format_byte_size(MAX_ARENA_BYTES),
        ),
        "shrink this tensor (or its pin's offset), or split the model's memory into pools of \
         at most 1 TiB each",
    )
}

fn at(
    model: &Model,
    location: Location,
    message: impl Into<String>,
    help: impl Into<String>,
) -> InputError {
    InputError::new(&model.file, location.line, location.column, message, help)
}

fn tensor_location(model: &Model, name: &str) -> Location {
    model
        .tensor_index(name)
        .map_or(model.locations.model, |i| model.tensors[i].location)
}

fn solve_error(model: &Model, error: &SolveError) -> InputError {
    match error {
        SolveError::PinnedOverlap { first, second } => at(
            model,
            tensor_location(model, second),
            format!(
                "pinned tensors `{first}` and `{second}` are live at the same step and their \
                 bytes overlap"
            ),
            "move the `offset` of one of them past the other's last byte, or put them in \
             different pools",
        ),
        other => at(
            model,
            model.locations.model,
            format!("the planner failed: {other}"),
            "use the default solver (remove `solver`) or `solver = \"auto\"`",
        ),
    }
}

fn pool_error(model: &Model, error: PoolError) -> InputError {
    match error {
        PoolError::Solve(e) => solve_error(model, &e),
        PoolError::BoundBuffersOverflow {
            pool,
            capacity,
            needed,
            lower_bound,
        } => {
            let decl = model.pools.iter().find(|p| p.name == pool);
            let location = decl
                .and_then(|p| p.size_location.or(Some(p.location)))
                .unwrap_or(model.locations.model);
            at(
                model,
                location,
                format!(
                    "pool `{pool}` is over-full: it holds {capacity} bytes ({}), but the tensors \
                     bound to it (by `pool` or `offset`) need {needed} bytes ({}); their lower \
                     bound is {lower_bound} bytes",
                    format_byte_size(capacity),
                    format_byte_size(needed)
                ),
                format!(
                    "raise its `size` to at least {needed}, or remove `pool = \"{pool}\"` from \
                     some tensors so they can spill to a later pool"
                ),
            )
        }
        PoolError::NothingFits {
            count,
            largest,
            largest_size,
            usage,
        } => {
            let location = model
                .pools
                .last()
                .map_or(model.locations.model, |p| p.location);
            at(
                model,
                location,
                format!(
                    "{count} tensor(s) fit in no pool, the largest `{largest}` ({largest_size} \
                     bytes); the pools are full ({})",
                    usage.join(", ")
                ),
                "raise a pool's `size`, or add a last `[[pools]]` without `size` for what does \
                 not fit in the fast pools",
            )
        }
        PoolError::NoPools | PoolError::NoSuchPool { .. } => model_error(model, format!("{error}")),
    }
}

fn options(model: &Model) -> SolveOptions {
    let mut options = SolveOptions::default();
    if let Some(solver) = model.solver {
        options.solver = solver;
    }
    if let Some(nodes) = model.nodes {
        options.node_budget = nodes;
    }
    options
}

/// Plans the model: app-owned (`external`) tensors are left out, in-place chains become one
/// rectangle each ([`AliasGroups`]), pinned tensors keep their `offset`, and the tensors are
/// spread over the pools, the first filled as fully as it can be before the next
/// ([`plan_pools`]); without `[[pools]]` everything goes to one arena, planned with the model's
/// solver (default [`crate::DEFAULT_OPTIONS`], i.e. `auto`).
///
/// The budget is checked against the arena the generated code would have (the height rounded up
/// to the arena's alignment; with pools, the sum of their arenas). Over budget, the error gives
/// the arena, the lower bound, the budget, the step at which the most bytes are live and the
/// largest tensors live then, located at the `budget` key. A pool that cannot hold what must go
/// into it fails with its numbers, located at the pool.
///
/// # Runtime
/// That of the solver on the merged problem, plus `O(n log n)` for `n` tensors.
pub fn plan_model(model: &Model) -> Result<ModelPlan, InputError> {
    let prepared = prepare(model)?;
    let options = options(model);
    let no_alias_bound = lower_bound(&prepared.problem);

    // (model indices, offsets) per pool, chains expanded.
    let mut pools = Vec::new();
    let mut places: Vec<Option<TensorPlace>> = vec![None; model.tensors.len()];
    if model.pools.is_empty() {
        let mut options = options.clone();
        options.capacity = model.budget;
        let solution = solve(&prepared.merged, &options).map_err(|e| solve_error(model, &e))?;
        let plan = prepared.groups.expand(&prepared.problem, &solution.plan);
        let alignment = model.arena_alignment();
        let arena_size = align_up(plan.arena_size, alignment);
        if let Some(budget) = model.budget
            && arena_size > budget
        {
            return Err(over_budget(model, &prepared.merged, arena_size, budget));
        }
        for (k, &i) in prepared.arena.iter().enumerate() {
            places[i] = Some(TensorPlace {
                pool: 0,
                offset: plan.offsets[k],
            });
        }
        pools.push(PlannedPool {
            name: "arena".to_owned(),
            default: true,
            capacity: None,
            link_section: None,
            tensors: prepared.arena.clone(),
            arena_size,
            alignment,
            lower_bound: lower_bound(&prepared.merged),
            solver: solution.solver,
            optimal: solution.optimal,
        });
    } else {
        let decls: Vec<Pool> = model
            .pools
            .iter()
            .map(|p| Pool {
                name: p.name.clone(),
                capacity: p.capacity,
            })
            .collect();
        // A chain goes where any member is bound (the parser made sure members agree).
        let mut bound: Vec<Option<usize>> = vec![None; prepared.merged.len()];
        for (k, &i) in prepared.arena.iter().enumerate() {
            if let Some(pool) = model.tensors[i].memory.pool {
                bound[prepared.groups.group_of(k)] = Some(pool);
            }
        }
        let pooled = plan_pools(&prepared.merged, &decls, &bound, &options)
            .map_err(|e| pool_error(model, e))?;
        for (p, (decl, pool_plan)) in model.pools.iter().zip(&pooled.pools).enumerate() {
            let mut tensors = Vec::new();
            for (k, &i) in prepared.arena.iter().enumerate() {
                let chain = prepared.groups.group_of(k);
                if pooled.pool_of[chain] != p {
                    continue;
                }
                let (_, offset) = pooled.location(chain);
                places[i] = Some(TensorPlace { pool: p, offset });
                tensors.push(i);
            }
            let alignment = tensors
                .iter()
                .map(|&i| model.tensors[i].alignment)
                .fold(model.alignment, u64::max);
            pools.push(PlannedPool {
                name: decl.name.clone(),
                default: false,
                capacity: decl.capacity,
                link_section: decl.link_section.clone(),
                tensors,
                arena_size: align_up(pool_plan.solution.plan.arena_size, alignment),
                alignment,
                lower_bound: lower_bound(&pool_plan.problem),
                solver: pool_plan.solution.solver,
                optimal: pool_plan.solution.optimal,
            });
        }
        // A limited pool's arena rounded up to its alignment still fits (sizes are checked
        // against the capacity before rounding; report it rather than emit a too-large arena).
        for pool in &pools {
            if let Some(capacity) = pool.capacity
                && pool.arena_size > capacity
            {
                let decl =
                    &model.pools[pools.iter().position(|p| p.name == pool.name).unwrap_or(0)];
                return Err(at(
                    model,
                    decl.size_location.unwrap_or(decl.location),
                    format!(
                        "pool `{}` holds {capacity} bytes, but its arena rounded up to its \
                             alignment {} is {} bytes",
                        pool.name, pool.alignment, pool.arena_size
                    ),
                    format!(
                        "make its `size` a multiple of {} (at least {})",
                        pool.alignment, pool.arena_size
                    ),
                ));
            }
        }
        if let Some(budget) = model.budget {
            let total: u64 = pools.iter().map(|p| p.arena_size).sum();
            if total > budget {
                return Err(over_budget(model, &prepared.merged, total, budget));
            }
        }
    }

    for pool in &pools {
        if pool.arena_size > MAX_ARENA_BYTES {
            return Err(arena_too_large(model, pool, &places));
        }
    }

    let chains = prepared
        .groups
        .groups()
        .iter()
        .filter(|members| members.len() > 1)
        .map(|members| members.iter().map(|&k| prepared.arena[k]).collect())
        .collect();
    let plan = ModelPlan {
        pools,
        tensors: places,
        chains,
        lower_bound_without_aliasing: no_alias_bound,
    };
    let problems = check(model, &plan);
    if !problems.is_empty() {
        return Err(model_error(
            model,
            format!(
                "internal error: the plan does not validate ({}); please report this",
                problems.join("; ")
            ),
        ));
    }
    Ok(plan)
}

/// Every violation of `plan` for `model`, as text: per pool, tensors live at the same step share
/// no bytes unless they are one in-place chain (then they start at the same offset), every
/// tensor fits in its pool's arena, pins are kept, tensors bound to a pool (`pool =`) are in
/// it, and limited pools stay within their size. Empty for a valid plan.
///
/// # Runtime
/// `O(n log n + k)` per pool for `n` tensors and `k` overlapping pairs (see [`crate::validate`]).
pub fn check(model: &Model, plan: &ModelPlan) -> Vec<String> {
    let mut problems = Vec::new();
    for (p, pool) in plan.pools.iter().enumerate() {
        let buffers: Vec<Buffer> = pool
            .tensors
            .iter()
            .map(|&i| {
                let t = &model.tensors[i];
                Buffer::new(t.name.clone(), t.size, t.lifetime.start, t.lifetime.end)
                    .with_alignment(t.alignment)
            })
            .collect();
        let Ok(problem) = Problem::new(buffers) else {
            problems.push(format!("pool `{}` has malformed tensors", pool.name));
            continue;
        };
        let mut offsets = Vec::with_capacity(pool.tensors.len());
        for &i in &pool.tensors {
            match plan.tensors[i] {
                Some(place) if place.pool == p => offsets.push(place.offset),
                _ => problems.push(format!(
                    "tensor `{}` is listed in pool `{}` but placed elsewhere",
                    model.tensors[i].name, pool.name
                )),
            }
            if let Some(pin) = model.tensors[i].memory.offset
                && plan.offset(i) != pin
            {
                problems.push(format!(
                    "tensor `{}` is pinned at {pin} but placed at {}",
                    model.tensors[i].name,
                    plan.offset(i)
                ));
            }
        }
        if offsets.len() != pool.tensors.len() {
            continue;
        }
        let mut position = vec![None; model.tensors.len()];
        for (k, &t) in pool.tensors.iter().enumerate() {
            position[t] = Some(k);
        }
        let local = |i: usize| position[i];
        let pairs: Vec<(usize, usize)> = model
            .aliases
            .iter()
            .filter_map(|a| Some((local(a.output)?, local(a.input)?)))
            .collect();
        let Ok(groups) = AliasGroups::new(pool.tensors.len(), &pairs) else {
            continue;
        };
        let plan_of_pool = Plan::from_offsets(&problem, offsets);
        let shown: Vec<Option<u64>> = plan_of_pool.offsets.iter().map(|&o| Some(o)).collect();
        for violation in groups.validate(&problem, &plan_of_pool) {
            let text = match violation {
                Violation::Overlap { first, second } if groups.same_group(first, second) => {
                    format!(
                        "`{}` and `{}` share memory in place but start at different offsets",
                        problem.buffers()[first].id,
                        problem.buffers()[second].id
                    )
                }
                _ => violation.display(&problem, &shown).to_string(),
            };
            problems.push(format!("pool `{}`: {text}", pool.name));
        }
        if plan_of_pool.arena_size > pool.arena_size {
            problems.push(format!("pool `{}` is smaller than its plan", pool.name));
        }
        if let Some(capacity) = pool.capacity
            && pool.arena_size > capacity
        {
            problems.push(format!("pool `{}` exceeds its size", pool.name));
        }
    }
    for (i, t) in model.tensors.iter().enumerate() {
        if t.memory.external != plan.tensors[i].is_none() {
            problems.push(format!(
                "tensor `{}` is misplaced (external or not)",
                t.name
            ));
        }
        // `pool = "sram"`: the generated code has the tensor's accessor in that pool's module.
        if let (Some(bound), Some(place)) = (t.memory.pool, plan.tensors[i])
            && place.pool != bound
        {
            let name = |p: usize| plan.pools.get(p).map_or("?", |p| p.name.as_str());
            problems.push(format!(
                "tensor `{}` is bound to pool `{}` (`pool =` in the model) but placed in \
                     pool `{}`",
                t.name,
                name(bound),
                name(place.pool)
            ));
        }
    }
    problems
}

/// The arena (all pools together) is larger than `budget`. The message names the tensors live at
/// the busiest step, each with where it is declared. When even the lower bound is over budget,
/// no plan fits and those tensors are what to change, so the error points at the largest of
/// them (and names the `budget` line); otherwise the solver left room and the error points at
/// `budget`.
fn over_budget(model: &Model, problem: &Problem, arena: u64, budget: u64) -> InputError {
    let bound = lower_bound(problem);
    let (step, live) = peak_step(problem).unwrap_or((0, 0));
    let place =
        |location: Location| format!("{}:{}:{}", model.file, location.line, location.column);
    let live_tensors = live_at(problem, step);
    let largest: Vec<String> = live_tensors
        .iter()
        .take(NAMED_IN_BUDGET_ERROR)
        .map(|&i| {
            let b = &problem.buffers()[i];
            let at = place(tensor_location(model, &b.id));
            format!("`{}` ({} bytes, {at})", b.id, b.size)
        })
        .collect();
    let more = live_tensors.len().saturating_sub(NAMED_IN_BUDGET_ERROR);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let op = model
        .ops
        .get(usize::try_from(step).unwrap_or(usize::MAX))
        .map_or(String::new(), |op| format!(" (op `{}`)", op.name));
    let budget_at = model.locations.budget.unwrap_or(model.locations.model);
    let message = format!(
        "over budget: the arena needs {arena} bytes ({}), the budget is {budget} bytes ({}, {}); \
         the lower bound is {bound} bytes ({}). At step {step}{op}, {live} bytes are live; \
         the largest tensors then: {}{more}",
        format_byte_size(arena),
        format_byte_size(budget),
        place(budget_at),
        format_byte_size(bound),
        largest.join(", "),
    );
    let help = if bound > budget {
        format!(
            "no plan can fit: even the lower bound is over budget. Make the tensors live at step \
             {step} smaller (split the op, use a smaller dtype or shape), or raise `budget` to at \
             least {} bytes",
            align_up(bound, model.arena_alignment())
        )
    } else {
        format!(
            "raise `budget` to {arena} bytes, or try `solver = \"exact\"`, which may find a plan \
             down to the lower bound, or lower `alignment` to cut padding"
        )
    };
    let location = match live_tensors.first() {
        Some(&largest) if bound > budget => tensor_location(model, &problem.buffers()[largest].id),
        _ => budget_at,
    };
    at(model, location, message, help)
}

/// Kept for callers that want the single arena's [`Solution`] shape: the plan of every arena
/// tensor of a model without `[[pools]]` (offsets in model order, external tensors at 0).
pub fn single_arena_solution(model: &Model, plan: &ModelPlan) -> Option<Solution> {
    let [pool] = plan.pools.as_slice() else {
        return None;
    };
    let offsets = (0..model.tensors.len()).map(|i| plan.offset(i)).collect();
    Some(Solution {
        plan: Plan {
            offsets,
            arena_size: pool.arena_size,
        },
        optimal: pool.optimal,
        nodes: 0,
        solver: pool.solver,
    })
}
