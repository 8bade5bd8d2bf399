//! Quantities and dimensions.
//!
//! A [`Quantity`] is a magnitude in base units (bytes, seconds, tokens, FLOPs, dollars,
//! requests, watts) with a [`Dim`]: the exponent of each base unit. Byte counts stay exact
//! integers ([`Num::Int`]); rates and ratios are `f64`.

use std::fmt::Write;

/// Exponents of the base units.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Dim(pub [i8; 7]);

const BYTES: usize = 0;
const SECONDS: usize = 1;
const TOKENS: usize = 2;
const FLOPS: usize = 3;
const DOLLARS: usize = 4;
const REQUESTS: usize = 5;
const WATTS: usize = 6;

const BASE_NAMES: [&str; 7] = ["B", "s", "tok", "FLOP", "$", "req", "W"];

impl Dim {
    pub const NONE: Dim = Dim([0; 7]);
    pub const BYTES: Dim = Dim::base(BYTES);
    pub const SECONDS: Dim = Dim::base(SECONDS);
    pub const TOKENS: Dim = Dim::base(TOKENS);
    pub const FLOPS: Dim = Dim::base(FLOPS);
    pub const DOLLARS: Dim = Dim::base(DOLLARS);
    pub const REQUESTS: Dim = Dim::base(REQUESTS);
    pub const WATTS: Dim = Dim::base(WATTS);
    pub const BANDWIDTH: Dim = Dim::BYTES.div(Dim::SECONDS);
    pub const COMPUTE: Dim = Dim::FLOPS.div(Dim::SECONDS);
    pub const TOKEN_RATE: Dim = Dim::TOKENS.div(Dim::SECONDS);
    pub const REQUEST_RATE: Dim = Dim::REQUESTS.div(Dim::SECONDS);
    pub const HOURLY: Dim = Dim::DOLLARS.div(Dim::SECONDS);
    pub const PER_TOKEN: Dim = Dim::DOLLARS.div(Dim::TOKENS);
    /// Dollars per joule: an electricity price, written `$0.15/kWh`.
    pub const ENERGY_PRICE: Dim = Dim::DOLLARS.div(Dim::WATTS.mul(Dim::SECONDS));

    const fn base(index: usize) -> Dim {
        let mut exps = [0; 7];
        exps[index] = 1;
        Dim(exps)
    }

    pub const fn mul(self, other: Dim) -> Dim {
        let mut exps = self.0;
        let mut i = 0;
        while i < 7 {
            exps[i] = exps[i].saturating_add(other.0[i]);
            i += 1;
        }
        Dim(exps)
    }

    pub const fn div(self, other: Dim) -> Dim {
        let mut exps = self.0;
        let mut i = 0;
        while i < 7 {
            exps[i] = exps[i].saturating_sub(other.0[i]);
            i += 1;
        }
        Dim(exps)
    }

    pub fn is_none(self) -> bool {
        self == Dim::NONE
    }

    /// Whether a value of `self` may stand where `other` is expected: equal dimensions,
    /// or a bare count where tokens are expected (language.md: "a bare count is accepted
    /// where tokens are expected").
    pub fn compatible(self, other: Dim) -> bool {
        self == other
            || (self == Dim::NONE && other == Dim::TOKENS)
            || (self == Dim::TOKENS && other == Dim::NONE)
    }

    /// What the dimension is called in a sentence.
    pub fn describe(self) -> String {
        let known: &[(Dim, &str)] = &[
            (Dim::NONE, "a number"),
            (Dim::BYTES, "bytes"),
            (Dim::SECONDS, "a time"),
            (Dim::TOKENS, "tokens"),
            (Dim::FLOPS, "FLOPs"),
            (Dim::DOLLARS, "money"),
            (Dim::WATTS, "power"),
            (Dim::BANDWIDTH, "a bandwidth"),
            (Dim::COMPUTE, "compute (FLOP/s)"),
            (Dim::TOKEN_RATE, "a token rate"),
            (Dim::REQUEST_RATE, "a request rate"),
            (Dim::HOURLY, "an hourly price"),
            (Dim::PER_TOKEN, "a price per token"),
            (Dim::ENERGY_PRICE, "an electricity price"),
        ];
        known
            .iter()
            .find(|(dim, _)| *dim == self)
            .map(|(_, name)| name.to_string())
            .unwrap_or_else(|| format!("a quantity in {}", self.unit_expression()))
    }

    /// The units a user can write for this dimension, for helps.
    pub fn example_units(self) -> &'static [&'static str] {
        match self {
            d if d == Dim::BYTES => &["GB", "GiB"],
            d if d == Dim::SECONDS => &["ms", "s", "h", "years"],
            d if d == Dim::TOKENS => &["tokens"],
            d if d == Dim::WATTS => &["W"],
            d if d == Dim::BANDWIDTH => &["GB/s", "TB/s"],
            d if d == Dim::COMPUTE => &["TFLOPS"],
            d if d == Dim::TOKEN_RATE => &["tok/s"],
            d if d == Dim::REQUEST_RATE => &["req/s"],
            _ => &[],
        }
    }

    /// How to write `value` with a unit of this dimension, e.g. "12 GB or 12 GiB".
    pub fn suggest(self, value: &str) -> Option<String> {
        let text = match self {
            d if d == Dim::HOURLY => format!("${value}/h"),
            d if d == Dim::PER_TOKEN => format!("${value}/Mtok"),
            d if d == Dim::ENERGY_PRICE => format!("${value}/kWh"),
            d if d == Dim::DOLLARS => format!("${value}"),
            d => {
                let units = d.example_units();
                if units.is_empty() {
                    return None;
                }
                units
                    .iter()
                    .map(|unit| format!("{value} {unit}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            }
        };
        Some(text)
    }

    /// The dimension as base units (`B/s`, `$·s⁻¹`), as `describe` falls back to.
    pub fn unit_expression(self) -> String {
        let mut out = String::new();
        for (i, exp) in self.0.iter().enumerate() {
            if *exp != 0 {
                if !out.is_empty() {
                    out.push('·');
                }
                out.push_str(BASE_NAMES[i]);
                if *exp != 1 {
                    let _ = write!(out, "^{exp}");
                }
            }
        }
        out
    }
}

/// A magnitude: an exact integer where possible, else a float.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum Num {
    Int(i128),
    Real(f64),
}

impl PartialEq for Num {
    fn eq(&self, other: &Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            _ => self.as_f64().to_bits() == other.as_f64().to_bits(),
        }
    }
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(value) => value as f64,
            Num::Real(value) => value,
        }
    }

    /// The value as whole units when it is one (or rounds to one, for bytes computed
    /// from fractional bits per weight).
    pub fn round_to_int(self) -> Option<i128> {
        match self {
            Num::Int(value) => Some(value),
            Num::Real(value) if value.is_finite() && value.abs() < 1e36 => {
                Some(value.round() as i128)
            }
            Num::Real(_) => None,
        }
    }

    fn normalize(value: f64) -> Num {
        if value.fract() == 0.0 && value.abs() < 1e30 {
            Num::Int(value as i128)
        } else {
            Num::Real(value)
        }
    }

    pub fn plus(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_add(b).map(Num::Int),
            _ => None,
        }
        .unwrap_or_else(|| Num::Real(self.as_f64() + other.as_f64()))
    }

    pub fn minus(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_sub(b).map(Num::Int),
            _ => None,
        }
        .unwrap_or_else(|| Num::Real(self.as_f64() - other.as_f64()))
    }

    pub fn times(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_mul(b).map(Num::Int),
            _ => None,
        }
        .unwrap_or_else(|| Num::Real(self.as_f64() * other.as_f64()))
    }

    /// Division; `None` when dividing by zero.
    pub fn over(self, other: Num) -> Option<Num> {
        if other.as_f64() == 0.0 {
            return None;
        }
        Some(match (self, other) {
            (Num::Int(a), Num::Int(b)) if a % b == 0 => Num::Int(a / b),
            _ => Num::Real(self.as_f64() / other.as_f64()),
        })
    }

    pub fn negate(self) -> Num {
        match self {
            Num::Int(value) => Num::Int(-value),
            Num::Real(value) => Num::Real(-value),
        }
    }

    pub fn from_f64(value: f64) -> Num {
        Num::normalize(value)
    }
}

/// A value with a dimension. `percent` only remembers that the value reads best as a
/// percentage (`95%`, `headroom`); arithmetic drops it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Quantity {
    pub num: Num,
    pub dim: Dim,
    pub percent: bool,
}

/// The largest magnitude (in base units) a value may have: beyond it a literal or a
/// result is an overflow (`deploy::eval::overflow`).
pub const MAX_MAGNITUDE: f64 = 1e300;

/// A unit a user can write after a number.
struct UnitDef {
    text: &'static str,
    factor: Num,
    dim: Dim,
}

const fn unit(text: &'static str, factor: Num, dim: Dim) -> UnitDef {
    UnitDef { text, factor, dim }
}

const UNITS: &[UnitDef] = &[
    unit("B", Num::Int(1), Dim::BYTES),
    unit("KB", Num::Int(1_000), Dim::BYTES),
    unit("MB", Num::Int(1_000_000), Dim::BYTES),
    unit("GB", Num::Int(1_000_000_000), Dim::BYTES),
    unit("TB", Num::Int(1_000_000_000_000), Dim::BYTES),
    unit("KiB", Num::Int(1 << 10), Dim::BYTES),
    unit("MiB", Num::Int(1 << 20), Dim::BYTES),
    unit("GiB", Num::Int(1 << 30), Dim::BYTES),
    unit("TiB", Num::Int(1 << 40), Dim::BYTES),
    unit("MB/s", Num::Int(1_000_000), Dim::BANDWIDTH),
    unit("GB/s", Num::Int(1_000_000_000), Dim::BANDWIDTH),
    unit("TB/s", Num::Int(1_000_000_000_000), Dim::BANDWIDTH),
    unit("GiB/s", Num::Int(1 << 30), Dim::BANDWIDTH),
    unit("GFLOPS", Num::Int(1_000_000_000), Dim::COMPUTE),
    unit("TFLOPS", Num::Int(1_000_000_000_000), Dim::COMPUTE),
    unit("TOPS", Num::Int(1_000_000_000_000), Dim::COMPUTE),
    unit("PFLOPS", Num::Int(1_000_000_000_000_000), Dim::COMPUTE),
    unit("tokens", Num::Int(1), Dim::TOKENS),
    unit("tok", Num::Int(1), Dim::TOKENS),
    unit("tok/s", Num::Int(1), Dim::TOKEN_RATE),
    unit("tokens/s", Num::Int(1), Dim::TOKEN_RATE),
    unit("req/s", Num::Int(1), Dim::REQUEST_RATE),
    unit("ms", Num::Real(0.001), Dim::SECONDS),
    unit("s", Num::Int(1), Dim::SECONDS),
    unit("h", Num::Int(3600), Dim::SECONDS),
    // A year of continuous use: 365 days, 8,760 hours.
    unit("years", Num::Int(SECONDS_PER_YEAR), Dim::SECONDS),
    unit("year", Num::Int(SECONDS_PER_YEAR), Dim::SECONDS),
    unit("W", Num::Int(1), Dim::WATTS),
    unit("%", Num::Real(0.01), Dim::NONE),
];

/// Every unit spelling the language accepts, for completion and docs.
pub fn unit_names() -> impl Iterator<Item = &'static str> {
    UNITS
        .iter()
        .map(|unit| unit.text)
        .chain(["$", "$/h", "$/Mtok", "$/kWh"])
}

/// Parses a number as written (`9_400_279_040`, `4.85`, `1.5e9`).
pub fn parse_number(text: &str) -> Num {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    if !clean.contains(['.', 'e', 'E'])
        && let Ok(value) = clean.parse::<i128>()
    {
        return Num::Int(value);
    }
    Num::Real(clean.parse::<f64>().unwrap_or(f64::INFINITY))
}

/// Builds the quantity of a literal: number, optional `k`/`M` context suffix (binary),
/// optional unit. `None` when the unit is unknown.
pub fn literal(number: &str, suffix: Option<&str>, unit_text: Option<&str>) -> Option<Quantity> {
    let mut num = parse_number(number);
    match suffix {
        Some("k") => num = num.times(Num::Int(1024)),
        Some("M") => num = num.times(Num::Int(1024 * 1024)),
        _ => {}
    }
    let Some(unit_text) = unit_text else {
        return Some(Quantity::number(num));
    };
    let def = UNITS.iter().find(|unit| unit.text == unit_text)?;
    Some(Quantity {
        num: num.times(def.factor),
        dim: def.dim,
        percent: unit_text == "%",
    })
}

/// Builds a money literal: `$329`, `$1.20/h`, `$0.50/Mtok`.
pub fn money(number: &str, suffix: Option<&str>, per: Option<&str>) -> Quantity {
    let base = literal(number, suffix, None)
        .map(|q| q.num)
        .unwrap_or(Num::Int(0));
    let (num, dim) = match per {
        Some("h") => (base.over(Num::Int(3600)).unwrap_or(base), Dim::HOURLY),
        Some("kWh") => (
            base.over(Num::Int(JOULES_PER_KWH)).unwrap_or(base),
            Dim::ENERGY_PRICE,
        ),
        Some("Mtok") => (
            base.over(Num::Int(1_000_000)).unwrap_or(base),
            Dim::PER_TOKEN,
        ),
        _ => (base, Dim::DOLLARS),
    };
    Quantity {
        num,
        dim,
        percent: false,
    }
}

impl Quantity {
    pub fn number(num: Num) -> Quantity {
        Quantity {
            num,
            dim: Dim::NONE,
            percent: false,
        }
    }

    pub fn new(num: Num, dim: Dim) -> Quantity {
        Quantity {
            num,
            dim,
            percent: false,
        }
    }

    pub fn bytes(bytes: i128) -> Quantity {
        Quantity::new(Num::Int(bytes), Dim::BYTES)
    }

    pub fn real(value: f64, dim: Dim) -> Quantity {
        Quantity::new(Num::from_f64(value), dim)
    }

    pub fn ratio(value: f64) -> Quantity {
        Quantity {
            num: Num::Real(value),
            dim: Dim::NONE,
            percent: true,
        }
    }

    pub fn value(self) -> f64 {
        self.num.as_f64()
    }

    /// Whether the value is a number the language computes with: not NaN, not
    /// infinite, and at most [`MAX_MAGNITUDE`] in size (so that it stays finite in every
    /// unit it is printed in: `$…/h` multiplies by 3,600, `$…/Mtok` by a million).
    pub fn is_finite(self) -> bool {
        self.value().abs() <= MAX_MAGNITUDE
    }

    /// Whether the value is undefined (0/0, ∞ − ∞), rather than too large.
    pub fn is_nan(self) -> bool {
        self.value().is_nan()
    }

    /// Prints the quantity in the unit a reader expects for its dimension; byte sizes
    /// always name GiB (binary) or GB (decimal) explicitly.
    pub fn display(self) -> String {
        let value = self.value();
        let dim = self.dim;
        if !value.is_finite() {
            return if value.is_nan() {
                "undefined".to_string()
            } else {
                "infinite".to_string()
            };
        }
        match dim {
            d if d == Dim::NONE => {
                if self.percent {
                    format!("{}%", trim(value * 100.0, 1))
                } else {
                    match self.num {
                        Num::Int(int) => group(int),
                        Num::Real(real) => trim(real, 3),
                    }
                }
            }
            d if d == Dim::BYTES => bytes(self.num),
            d if d == Dim::TOKENS => match self.num.round_to_int() {
                Some(int) if int >= 1024 && int.unsigned_abs().is_multiple_of(1024) => {
                    format!("{}k", group(int / 1024))
                }
                Some(int) if self.num.as_f64().fract() == 0.0 => group(int),
                _ => trim(value, 1),
            },
            d if d == Dim::SECONDS => {
                if value.abs() < 1.0 {
                    format!("{} ms", trim(value * 1000.0, 1))
                } else if value.abs() < 3600.0 {
                    format!("{} s", trim(value, 2))
                } else if value.abs() >= SECONDS_PER_YEAR as f64
                    && (value / SECONDS_PER_YEAR as f64).fract() == 0.0
                {
                    format!("{} years", trim(value / SECONDS_PER_YEAR as f64, 2))
                } else {
                    format!("{} h", trim(value / 3600.0, 2))
                }
            }
            d if d == Dim::BANDWIDTH => format!("{} GB/s", trim(value / 1e9, 1)),
            d if d == Dim::COMPUTE => format!("{} TFLOPS", trim(value / 1e12, 1)),
            d if d == Dim::TOKEN_RATE => format!("{} tok/s", trim(value, 1)),
            d if d == Dim::REQUEST_RATE => format!("{} req/s", trim(value, 2)),
            d if d == Dim::DOLLARS => format!("${}", money_digits(value)),
            d if d == Dim::HOURLY => format!("${}/h", money_digits(per_hour(value))),
            d if d == Dim::PER_TOKEN => format!("${}/Mtok", money_digits(per_mtok(value))),
            d if d == Dim::ENERGY_PRICE => {
                format!("${}/kWh", money_digits(value * JOULES_PER_KWH as f64))
            }
            d if d == Dim::WATTS => format!("{} W", trim(value, 0)),
            d => format!("{} {}", trim(value, 3), d.unit_expression()),
        }
    }
}

fn money_digits(value: f64) -> String {
    if value.abs() >= 0.01 || value == 0.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.4}")
    }
}

/// A byte count in GiB/MiB/KiB with two decimals, or exact bytes below 1 KiB.
fn bytes(num: Num) -> String {
    let value = num.as_f64();
    let abs = value.abs();
    if abs >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", value / (1u64 << 30) as f64)
    } else if abs >= (1u64 << 20) as f64 {
        format!("{:.2} MiB", value / (1u64 << 20) as f64)
    } else if abs >= 1024.0 {
        format!("{:.2} KiB", value / 1024.0)
    } else {
        format!("{} B", trim(value, 0))
    }
}

/// `value` with at most `places` decimals and no trailing zeros.
fn trim(value: f64, places: usize) -> String {
    let text = format!("{value:.places$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// An integer with thousands separators: 9,400,279,040.
fn group(value: i128) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0 { format!("-{out}") } else { out }
}

/// Seconds in an hour.
pub const SECONDS_PER_HOUR: f64 = 3600.0;
/// A year in the `years` unit: 365 days of 24 hours (8,760 h), as in amortisation.
pub const SECONDS_PER_YEAR: i128 = 365 * 24 * 3600;
/// Joules in a kilowatt-hour, for `$…/kWh`.
pub const JOULES_PER_KWH: i128 = 3_600_000;

/// An hourly price, stored per second (the base unit), as reported: dollars per hour.
/// Every output (text, JSON, tables) converts through this one function.
pub fn per_hour(dollars_per_second: f64) -> f64 {
    dollars_per_second * SECONDS_PER_HOUR
}

/// A price per token, stored per token, as reported: dollars per million tokens.
pub fn per_mtok(dollars_per_token: f64) -> f64 {
    dollars_per_token * 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal_bytes_are_exact() {
        assert_eq!(
            literal("12", None, Some("GiB")).unwrap().num,
            Num::Int(12 << 30)
        );
        assert_eq!(
            literal("12", None, Some("GB")).unwrap().num,
            Num::Int(12_000_000_000)
        );
        assert_eq!(
            literal("1.5", None, Some("GiB")).unwrap().num,
            Num::Int(1_610_612_736)
        );
        assert_eq!(
            literal("9_400_279_040", None, None).unwrap().num,
            Num::Int(9_400_279_040)
        );
    }

    #[test]
    fn context_suffixes_are_binary() {
        assert_eq!(
            literal("32", Some("k"), None).unwrap().num,
            Num::Int(32_768)
        );
        assert_eq!(
            literal("1", Some("M"), None).unwrap().num,
            Num::Int(1_048_576)
        );
    }

    #[test]
    fn money_and_rates() {
        let hourly = money("1.20", None, Some("h"));
        assert_eq!(hourly.dim, Dim::HOURLY);
        assert_eq!(hourly.display(), "$1.20/h");
        assert_eq!(money("0.50", None, Some("Mtok")).display(), "$0.50/Mtok");
        assert_eq!(money("329", None, None).display(), "$329.00");
        let power = money("0.15", None, Some("kWh"));
        assert_eq!(power.dim, Dim::ENERGY_PRICE);
        assert_eq!(power.display(), "$0.15/kWh");
        // 450 W for an hour at $0.15/kWh is 6.75 cents.
        let joules = 450.0 * 3600.0;
        assert!((power.value() * joules - 0.0675).abs() < 1e-12);
        let years = literal("3", None, Some("years")).unwrap();
        assert_eq!(years.value(), 3.0 * 8760.0 * 3600.0);
        assert_eq!(years.display(), "3 years");
        assert_eq!(
            literal("864", None, Some("GB/s")).unwrap().display(),
            "864 GB/s"
        );
        assert_eq!(literal("30", None, Some("ms")).unwrap().display(), "30 ms");
        assert_eq!(literal("95", None, Some("%")).unwrap().display(), "95%");
        assert_eq!(
            literal("32", Some("k"), Some("tokens")).unwrap().display(),
            "32k"
        );
    }

    #[test]
    fn dimensions_combine() {
        let time = Dim::BYTES.div(Dim::BANDWIDTH);
        assert_eq!(time, Dim::SECONDS);
        assert!(Dim::NONE.compatible(Dim::TOKENS));
        assert!(!Dim::NONE.compatible(Dim::BYTES));
        assert_eq!(Dim::BYTES.suggest("12").unwrap(), "12 GB or 12 GiB");
    }
}
