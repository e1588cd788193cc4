//! The 18 program sets of the thesis's final experiment (Table 6.16) and
//! the rows the thesis published for them (Tables 6.17–6.20: Tree search,
//! 30 s per program, 50 programs per set; docs/generator.md §3).

use super::Params;

/// One of the thesis's techniques, in the order of its tables.
pub const TECHNIQUES: [&str; 4] = ["base", "merging", "subsumption", "summarisation"];

/// A published row: path coverage, total time, timeouts, errors found, over
/// the set's 50 programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Published {
    pub coverage: u64,
    pub ms: u64,
    pub timeouts: u32,
    pub errors: u32,
}

/// A program set: `forProb-whileProb-depth-errorGuaranteed-divisions`.
#[derive(Clone, Copy, Debug)]
pub struct ThesisSet {
    pub name: &'static str,
    /// forLoopGenProb and loopGenProb, in percent.
    pub for_percent: u32,
    pub while_percent: u32,
    pub max_block_depth: u32,
    pub error_guaranteed: bool,
    pub generate_divisions: bool,
    /// The thesis's rows, one per entry of `TECHNIQUES`.
    pub published: [Published; 4],
}

/// Programs per set in the thesis.
pub const THESIS_PROGRAMS_PER_SET: u32 = 50;

impl ThesisSet {
    /// The generator's parameters for this set. Table 6.16 does not give
    /// the statement counts; we take those of §6.3.2's first experiment
    /// (10 top-level statements, 5 per block), whose parameters are
    /// otherwise exactly set 15-10-3-f-t's (docs/generator.md §3).
    pub fn params(&self) -> Params {
        let (top, block) = (10, 5);
        Params {
            for_loop_gen_prob: self.for_percent as f64 / 100.0,
            loop_gen_prob: self.while_percent as f64 / 100.0,
            max_block_depth: self.max_block_depth,
            max_top_lvl_stmts_count: top,
            max_stmts_within_a_block: block,
            error_guaranteed: self.error_guaranteed,
            generate_divisions: self.generate_divisions,
        }
    }

    pub fn named(name: &str) -> Option<&'static ThesisSet> {
        THESIS_SETS.iter().find(|s| s.name == name)
    }
}

const fn r(coverage: u64, ms: u64, timeouts: u32, errors: u32) -> Published {
    Published {
        coverage,
        ms,
        timeouts,
        errors,
    }
}

const fn set(
    name: &'static str,
    for_percent: u32,
    while_percent: u32,
    max_block_depth: u32,
    error_guaranteed: bool,
    generate_divisions: bool,
    published: [Published; 4],
) -> ThesisSet {
    ThesisSet {
        name,
        for_percent,
        while_percent,
        max_block_depth,
        error_guaranteed,
        generate_divisions,
        published,
    }
}

/// Table 6.16's sets in its order, with Tables 6.17 (base), 6.18 (lattice
/// merging, limit-cost 1), 6.19 (subsumption) and 6.20 (summarisation) as
/// printed. (6.19's 55,836 ms for 15-10-3-f-f with 18 timeouts of 30 s
/// cannot be right; it is kept as printed.)
pub const THESIS_SETS: [ThesisSet; 18] = [
    set(
        "15-10-3-f-f",
        15,
        10,
        3,
        false,
        false,
        [
            r(37806, 901826, 30, 0),
            r(33542, 901403, 30, 0),
            r(15272, 55836, 18, 0),
            r(3099, 251633, 8, 0),
        ],
    ),
    set(
        "15-10-5-f-f",
        15,
        10,
        5,
        false,
        false,
        [
            r(40581, 872229, 29, 0),
            r(35889, 871625, 29, 0),
            r(19099, 603792, 19, 2),
            r(9422, 498189, 16, 1),
        ],
    ),
    set(
        "50-10-3-f-f",
        50,
        10,
        3,
        false,
        false,
        [
            r(47607, 1141582, 38, 0),
            r(36455, 1141582, 38, 0),
            r(24668, 947529, 31, 0),
            r(9468, 640904, 21, 0),
        ],
    ),
    set(
        "50-10-5-f-f",
        50,
        10,
        5,
        false,
        false,
        [
            r(50149, 1141485, 38, 0),
            r(40295, 1141203, 38, 0),
            r(23842, 929905, 30, 1),
            r(8529, 502850, 16, 0),
        ],
    ),
    set(
        "15-50-3-f-f",
        15,
        50,
        3,
        false,
        false,
        [
            r(28069, 724232, 24, 0),
            r(24357, 723835, 24, 0),
            r(12478, 455024, 13, 0),
            r(2507, 203684, 6, 0),
        ],
    ),
    set(
        "15-50-5-f-f",
        15,
        50,
        5,
        false,
        false,
        [
            r(28011, 874873, 29, 0),
            r(22908, 874392, 29, 0),
            r(4322, 429401, 11, 4),
            r(5362, 305749, 9, 0),
        ],
    ),
    set(
        "15-10-3-t-t",
        15,
        10,
        3,
        true,
        true,
        [
            r(3041, 62081, 2, 48),
            r(2414, 62152, 2, 48),
            r(817, 64676, 2, 47),
            r(456, 35600, 1, 49),
        ],
    ),
    set(
        "15-10-5-t-t",
        15,
        10,
        5,
        true,
        true,
        [
            r(7868, 151910, 5, 45),
            r(7342, 151616, 5, 45),
            r(6968, 152370, 5, 45),
            r(212, 33980, 1, 45),
        ],
    ),
    set(
        "50-10-3-t-t",
        50,
        10,
        3,
        true,
        true,
        [
            r(5657, 152193, 5, 45),
            r(5696, 151771, 5, 45),
            r(1554, 44621, 1, 45),
            r(760, 36435, 1, 45),
        ],
    ),
    set(
        "50-10-5-t-t",
        50,
        10,
        5,
        true,
        true,
        [
            r(3419, 62452, 2, 48),
            r(2844, 61835, 2, 48),
            r(2104, 67741, 2, 48),
            r(1895, 65962, 2, 48),
        ],
    ),
    set(
        "15-50-3-t-t",
        15,
        50,
        3,
        true,
        true,
        [
            r(825, 46485, 1, 49),
            r(505, 35563, 0, 50),
            r(1875, 109909, 3, 47),
            r(1810, 106600, 3, 47),
        ],
    ),
    set(
        "15-50-5-t-t",
        15,
        50,
        5,
        true,
        true,
        [
            r(4492, 123366, 4, 46),
            r(4100, 122836, 4, 46),
            r(2188, 162591, 5, 44),
            r(2121, 104310, 3, 44),
        ],
    ),
    set(
        "15-10-3-f-t",
        15,
        10,
        3,
        false,
        true,
        [
            r(28667, 784102, 26, 11),
            r(24676, 783858, 26, 11),
            r(17037, 587409, 18, 11),
            r(6503, 434515, 14, 10),
        ],
    ),
    set(
        "15-10-5-f-t",
        15,
        10,
        5,
        false,
        true,
        [
            r(33562, 933317, 31, 1),
            r(28680, 932748, 31, 2),
            r(19369, 715169, 22, 2),
            r(7960, 497141, 16, 3),
        ],
    ),
    set(
        "50-10-3-f-t",
        50,
        10,
        3,
        false,
        true,
        [
            r(43290, 1085621, 36, 6),
            r(35522, 1085621, 36, 6),
            r(26851, 785561, 25, 6),
            r(10525, 584797, 19, 5),
        ],
    ),
    set(
        "50-10-5-f-t",
        50,
        10,
        5,
        false,
        true,
        [
            r(43131, 966059, 32, 9),
            r(36124, 964590, 32, 9),
            r(29095, 918933, 29, 7),
            r(4786, 293972, 9, 7),
        ],
    ),
    set(
        "15-50-3-f-t",
        15,
        50,
        3,
        false,
        true,
        [
            r(19869, 741374, 24, 7),
            r(16948, 731073, 24, 7),
            r(9566, 422012, 12, 7),
            r(5393, 318674, 10, 5),
        ],
    ),
    set(
        "15-50-5-f-t",
        15,
        50,
        5,
        false,
        true,
        [
            r(28916, 994137, 33, 0),
            r(27241, 993267, 33, 0),
            r(8098, 670180, 19, 3),
            r(4689, 329352, 10, 0),
        ],
    ),
];
