//! The branching rules ([`Preference`]): which buffer a search tries first at the lowest open
//! offset, the order the restart rounds take them in, and the salts that perturb their keys from
//! round to round. Shared by the loop of searches ([`super::search`]), the state of one search
//! ([`super::node`]) and its branching ([`super::branch`]).

/// Which buffer to branch on first among those that can take the lowest offset. Each rule
/// fails fast on different instances, so [`decide`] takes turns.
///
/// Two kinds of rules. A *static* rule ranks buffers by fixed keys (area, lifetime, the peak
/// load of their steps). A *tightest-section* rule first finds where `next` is hardest to
/// fill (see [`Search::tightest_section`]) and ranks only the buffers that can fill it: in a
/// section whose bytes still to place exactly reach the target, the spot at `next` cannot stay
/// empty, so one of those buffers must go there, and trying them first refutes a dead end at
/// once rather than after placing everything else (the first-fail principle). Static rules
/// suit instances with slack; tightest-section rules suit packings that must be perfect at
/// their busiest steps, where static rules stall (planted instances of the generalisation
/// families, and mutants of the MiniMalloc instances). One rule ranks by the bytes still to
/// place, re-derived in each piece of a time cut, as MiniMalloc re-sorts each sub-partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Preference {
    /// The largest `size x lifetime x peak load of its steps`: big, long buffers in the
    /// busiest times first.
    AreaInBusyTimes,
    /// The tightest section, then [`Preference::BusiestThenLongest`].
    TightestThenBusiest,
    /// The tightest section, then the longest lifetime, then the largest size.
    TightestThenLongest,
    /// The most bytes still to place in one of its sections (re-derived in each piece of a
    /// time cut), then the longest lifetime, then the largest area.
    LeftThenLongest,
    /// The tightest section, then [`Preference::AreaInBusyTimes`].
    TightestThenArea,
    /// The busiest steps, then the longest lifetime.
    BusiestThenLongest,
    /// The longest lifetime, then the largest area, then the most bytes still to place.
    LongestThenArea,
}

impl Preference {
    /// The rules in the order [`decide_round`] tries them.
    ///
    /// Every rule solves instances of the generalisation families that no other rule solves
    /// within 100,000 nodes, except [`Preference::BusiestThenLongest`], which solves F, its
    /// copies and two of the mutants of the MiniMalloc instances in a twentieth of the nodes
    /// of the next best rule. The order puts the rules that solve the most first (an
    /// instance pays at most one attempt a rule a round for the rules before its own).
    pub(super) const ALL: &'static [Preference] = &[
        Preference::TightestThenBusiest,
        Preference::TightestThenArea,
        Preference::AreaInBusyTimes,
        Preference::TightestThenLongest,
        Preference::LeftThenLongest,
        Preference::BusiestThenLongest,
        Preference::LongestThenArea,
    ];

    /// The rules in the order [`decide_window`] tries them.
    pub(super) const WINDOWS: &'static [Preference] = &[
        Preference::AreaInBusyTimes,
        Preference::TightestThenBusiest,
        Preference::TightestThenArea,
        Preference::TightestThenLongest,
        Preference::LeftThenLongest,
        Preference::BusiestThenLongest,
        Preference::LongestThenArea,
    ];

    /// Whether the rule ranks only the buffers that can fill the tightest section.
    pub(super) fn tightest_first(self) -> bool {
        matches!(
            self,
            Preference::TightestThenBusiest
                | Preference::TightestThenLongest
                | Preference::TightestThenArea
        )
    }
}

/// The salt of the branching preference in restart round `round`: 0 (the rule's own keys) in
/// even rounds, a per-round salt in odd ones.
///
/// Each rule is one static idea of which buffer to place first, and an instance it does not
/// suit makes every round of it fail the same way, only with more nodes (a planted guillotine
/// instance stalled at 1.19x its optimum with 500,000 nodes). So odd rounds scale each key by a
/// pseudo-random factor in `[1, 2)`, fixed per buffer and round: the same rule, but a different
/// order among buffers whose keys are within 2x, hence a different tree. Even rounds keep the
/// rules as they are, so an instance that suits a rule still gets its full rounds (every other
/// round).
pub(super) fn tie_salt(round: u32) -> u64 {
    if round % 2 == 1 {
        mix(u64::from(round) + 1)
    } else {
        0
    }
}

/// A bijective mix of 64 bits (splitmix64's finaliser): a fixed pseudo-random order.
pub(super) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
