//! Keeping a picture of thousands of buffers readable and small: the largest buffers are drawn one
//! by one, the rest are summed into a coarse density grid, and the live-bytes line keeps at most
//! one stair per pixel column.

use crate::model::{Plan, Problem};
use crate::render::scale::Frame;

/// Which buffers get their own rectangle (largest drawn area first, at most `max_individual`).
/// Returns their indices in input order and the indices of the rest.
///
/// # Runtime
/// `O(n log n)`.
pub(crate) fn split_by_area(
    problem: &Problem,
    frame: &Frame,
    max_individual: usize,
) -> (Vec<usize>, Vec<usize>) {
    let n = problem.len();
    if n <= max_individual {
        return ((0..n).collect(), Vec::new());
    }
    let area = |i: usize| {
        let b = &problem.buffers()[i];
        b.size as f64 * frame.byte_height() * b.lifetime.len() as f64 * frame.step_width()
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| area(b).total_cmp(&area(a)).then(a.cmp(&b)));
    let mut individual = order[..max_individual].to_vec();
    let mut rest = order[max_individual..].to_vec();
    individual.sort_unstable();
    rest.sort_unstable();
    (individual, rest)
}

/// The density grid's resolution: coarser cells and fewer levels make fewer, longer runs (a
/// smaller file).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    /// Side of a cell, in pixels.
    pub(crate) cell: f64,
    /// Number of darkness levels of a cell.
    pub(crate) levels: u32,
}

/// A run of density cells of one darkness level in one grid row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DensityRun {
    /// Grid row, 0 at the top.
    pub(crate) row: usize,
    /// First grid column.
    pub(crate) column: usize,
    /// Number of cells.
    pub(crate) cells: usize,
    /// Darkness, `1..=grid.levels`: the covered fraction of the cells, rounded up.
    pub(crate) level: u32,
}

/// The density grid of `buffers` (indices into the problem) at `plan`'s offsets, as runs.
///
/// # Runtime
/// `O(n + cells touched)`; in a valid plan the buffers do not overlap, so the cells touched are
/// about the grid's cell count plus the buffers' perimeters.
pub(crate) fn density(
    problem: &Problem,
    plan: &Plan,
    frame: &Frame,
    buffers: &[usize],
    grid: Grid,
) -> Vec<DensityRun> {
    let Grid { cell, levels } = grid;
    let columns = (frame.width / cell).ceil() as usize;
    let rows = (frame.height / cell).ceil() as usize;
    let mut coverage = vec![0f64; columns * rows];
    for &i in buffers {
        let b = &problem.buffers()[i];
        let Some(&offset) = plan.offsets.get(i) else {
            continue;
        };
        // The rectangle relative to the plot area's top-left corner, in pixels.
        let x0 = frame.x(b.lifetime.start) - frame.left;
        let x1 = frame.x(b.lifetime.end) - frame.left;
        let y0 = frame.y(offset.saturating_add(b.size)) - frame.top;
        let y1 = frame.y(offset) - frame.top;
        let (x0, x1) = (x0.max(0.0), x1.min(frame.width));
        let (y0, y1) = (y0.max(0.0), y1.min(frame.height));
        if x1 <= x0 || y1 <= y0 {
            continue;
        }
        let (c0, c1) = (
            (x0 / cell) as usize,
            ((x1 / cell).ceil() as usize).min(columns),
        );
        let (r0, r1) = (
            (y0 / cell) as usize,
            ((y1 / cell).ceil() as usize).min(rows),
        );
        for r in r0..r1 {
            let top = r as f64 * cell;
            let dy = (y1.min(top + cell) - y0.max(top)).max(0.0);
            for c in c0..c1 {
                let left = c as f64 * cell;
                let dx = (x1.min(left + cell) - x0.max(left)).max(0.0);
                coverage[r * columns + c] += dx * dy / (cell * cell);
            }
        }
    }
    let mut runs = Vec::new();
    for row in 0..rows {
        let mut column = 0;
        while column < columns {
            let level = level_of(coverage[row * columns + column], levels);
            let start = column;
            while column < columns && level_of(coverage[row * columns + column], levels) == level {
                column += 1;
            }
            if level > 0 {
                runs.push(DensityRun {
                    row,
                    column: start,
                    cells: column - start,
                    level,
                });
            }
        }
    }
    runs
}

fn level_of(coverage: f64, levels: u32) -> u32 {
    if coverage <= 1e-9 {
        0
    } else {
        ((coverage.min(1.0) * f64::from(levels)).ceil() as u32).clamp(1, levels)
    }
}

/// The live-bytes line as `(step, bytes)` stairs: `bytes` live from `step` to the next entry's step
/// (the last one to the end of the frame). With more steps than pixel columns, each column keeps
/// the most bytes live in it, so the peak is never lost.
///
/// # Runtime
/// `O(profile + columns)`.
pub(crate) fn profile_stairs(profile: &[(u64, u64)], frame: &Frame) -> Vec<(u64, u64)> {
    let columns = frame.width.floor() as u64;
    if frame.steps <= columns || profile.is_empty() {
        return profile.to_vec();
    }
    let column_of =
        |step: u64| (u128::from(step) * u128::from(columns) / u128::from(frame.steps)) as u64;
    let mut most = vec![0u64; columns as usize];
    for (k, &(step, bytes)) in profile.iter().enumerate() {
        let end = profile.get(k + 1).map_or(frame.steps, |&(next, _)| next);
        if end <= step || step >= frame.steps {
            continue;
        }
        let last = column_of(end.min(frame.steps) - 1).min(columns - 1);
        for column in column_of(step)..=last {
            let slot = &mut most[column as usize];
            *slot = (*slot).max(bytes);
        }
    }
    // Back to steps: column c starts at the first step that maps to it.
    let mut stairs: Vec<(u64, u64)> = Vec::new();
    for (column, &bytes) in most.iter().enumerate() {
        let step = (column as u128 * u128::from(frame.steps)).div_ceil(u128::from(columns)) as u64;
        match stairs.last() {
            Some(&(_, last)) if last == bytes => {}
            _ => stairs.push((step, bytes)),
        }
    }
    stairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    fn frame(steps: u64, max_bytes: u64) -> Frame {
        Frame {
            left: 10.0,
            top: 10.0,
            width: 100.0,
            height: 40.0,
            steps,
            max_bytes,
        }
    }

    #[test]
    fn the_largest_buffers_are_drawn_one_by_one() {
        let problem = Problem::new(vec![
            Buffer::new("small", 1, 0, 1),
            Buffer::new("big", 10, 0, 1),
            Buffer::new("long", 2, 0, 10),
        ])
        .unwrap();
        let (individual, rest) = split_by_area(&problem, &frame(10, 20), 2);
        assert_eq!(individual, vec![1, 2]);
        assert_eq!(rest, vec![0]);
    }

    #[test]
    fn density_covers_the_cells_under_the_buffers() {
        // One buffer filling the whole lower half of the frame: half the rows, fully dark.
        let problem = Problem::new(vec![Buffer::new("a", 10, 0, 10)]).unwrap();
        let plan = Plan::from_offsets(&problem, vec![0]);
        let grid = Grid {
            cell: 4.0,
            levels: 8,
        };
        let runs = density(&problem, &plan, &frame(10, 20), &[0], grid);
        assert_eq!(runs.len(), 5);
        assert!(runs.iter().all(|r| r.level == 8 && r.cells == 25));
        assert_eq!(runs[0].row, 5);
    }

    #[test]
    fn stairs_keep_the_peak_of_each_column() {
        // 1000 steps in 100 columns; a one-step spike at step 501 must survive.
        let profile = vec![(0, 5), (501, 50), (502, 5), (1000, 0)];
        let stairs = profile_stairs(&profile, &frame(1000, 60));
        assert!(stairs.len() <= 100);
        assert_eq!(stairs.iter().map(|s| s.1).max(), Some(50));
        assert!(stairs.contains(&(500, 50)));
    }
}
