//! The duration syntax shared by scenario files and the command line (`"10ms"`, `"1.5s"`, a
//! bare integer of nanoseconds) and the `work` range form `"LO..HI"`.
//!
//! Owns turning one value into a [`Duration`] or a work [`Step`], with a message but no
//! position. It must not know about tables, keys or lines: callers wrap its messages with the
//! place the value came from (`source.rs`).

use std::time::Duration;

use toml::Value;

use super::Step;

/// What a valid duration looks like, quoted in every duration error.
///
/// ```
/// assert!(tempi_cli::parse_duration("4 ms").unwrap_err().contains(tempi_cli::scenario::DURATION_HINT));
/// ```
pub const DURATION_HINT: &str = "expected e.g. 12ms, 500us, 1.5s";

/// Parse a duration: a decimal number followed by a unit (`ns`, `us` or `µs`, `ms`, `s`), or a
/// bare integer meaning nanoseconds. No spaces, no sign; fractions must come out as whole
/// nanoseconds.
///
/// ```
/// use std::time::Duration;
/// use tempi_cli::parse_duration;
/// assert_eq!(parse_duration("12ms"), Ok(Duration::from_millis(12)));
/// assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("250"), Ok(Duration::from_nanos(250)));
/// ```
///
/// A near miss gets the right spelling in its error:
///
/// ```
/// assert!(tempi_cli::parse_duration("10sec").unwrap_err().ends_with("did you mean \"10s\"?"));
/// assert!(tempi_cli::parse_duration("10 ms").unwrap_err().ends_with("did you mean \"10ms\" (no space)?"));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || match spelling_hint(text) {
        Some(hint) => format!("invalid duration \"{text}\" ({DURATION_HINT}): did you mean {hint}?"),
        None => format!("invalid duration \"{text}\" ({DURATION_HINT})"),
    };
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(bad()),
    };
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (number, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // A bare number is nanoseconds, and a nanosecond has no fraction worth writing.
    if !digits(int) || (unit.is_empty() && frac.is_some()) {
        return Err(bad());
    }
    let too_big = || format!("invalid duration \"{text}\": too large");
    let whole = int.parse::<u64>().map_err(|_| too_big())?.checked_mul(scale).ok_or_else(too_big)?;
    let part = match frac {
        None => 0,
        Some(f) if !digits(f) => return Err(bad()),
        Some(f) => {
            // Trailing zeros add no precision; dropping them keeps the exponent small.
            let f = f.trim_end_matches('0');
            if f.is_empty() {
                0
            } else if f.len() > 9 {
                return Err(format!("invalid duration \"{text}\": finer than a nanosecond"));
            } else {
                let numer = f.parse::<u128>().map_err(|_| bad())? * scale as u128;
                let denom = 10u128.pow(f.len() as u32);
                if !numer.is_multiple_of(denom) {
                    return Err(format!("invalid duration \"{text}\": finer than a nanosecond"));
                }
                (numer / denom) as u64
            }
        }
    };
    whole.checked_add(part).map(Duration::from_nanos).ok_or_else(too_big)
}

/// The valid spelling of a duration that is one only by a common slip (a space, a unit
/// written out or in capitals, minutes or hours), quoted and with the slip named when it is
/// not obvious; `None` when no valid spelling is close.
fn spelling_hint(text: &str) -> Option<String> {
    let trimmed = text.trim();
    let compact: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
    let split = compact.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(compact.len());
    let (number, unit) = compact.split_at(split);
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') || number.matches('.').count() > 1 {
        return None;
    }
    let unit = unit.to_lowercase();
    let unit = unit.as_str();
    let plain = match unit {
        "ns" | "nsec" | "nsecs" | "nanos" | "nanosecond" | "nanoseconds" => "ns",
        "us" | "µs" | "usec" | "usecs" | "micros" | "microsecond" | "microseconds" => "us",
        "ms" | "msec" | "msecs" | "millis" | "millisecond" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "m" | "min" | "mins" | "minute" | "minutes" | "h" | "hr" | "hour" | "hours" => {
            // No unit above seconds: minutes and hours are written in seconds.
            let per = if unit.starts_with('h') { 3600 } else { 60 };
            let whole: u64 = number.parse().ok()?;
            return Some(format!("\"{}s\" (durations have no unit above seconds)", whole.checked_mul(per)?));
        }
        _ => return None,
    };
    let fixed = format!("{number}{plain}");
    if parse_duration(&fixed).is_err() {
        return None;
    }
    let slip = if trimmed != text {
        " (no space around it)"
    } else if compact != trimmed {
        " (no space)"
    } else {
        ""
    };
    Some(format!("\"{fixed}\"{slip}"))
}

/// `d` written as the file would write it: in the largest unit that keeps it whole
/// (`10ns`, `1500us`, `2ms`, `3s`).
pub(super) fn written(d: Duration) -> String {
    let ns = d.as_nanos();
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// A duration value from the file: a duration string, or an integer number of nanoseconds.
pub(super) fn duration_value(v: &Value) -> Result<Duration, String> {
    match v {
        Value::String(s) => parse_duration(s),
        Value::Integer(n) => u64::try_from(*n)
            .map(Duration::from_nanos)
            .map_err(|_| format!("invalid duration {n}: durations cannot be negative")),
        other => Err(format!("invalid duration {other} ({DURATION_HINT}, or an integer number of nanoseconds)")),
    }
}

/// A `work` value: a duration or a range `"LO..HI"`.
pub(super) fn work_value(v: &Value) -> Result<Step, String> {
    if let Value::String(s) = v
        && let Some((lo, hi)) = s.split_once("..")
    {
        let (lo, hi) = (parse_duration(lo)?, parse_duration(hi)?);
        if lo > hi {
            return Err(format!("invalid range \"{s}\": the lower bound is above the upper"));
        }
        return Ok(if lo == hi { Step::Work(lo) } else { Step::WorkBetween(lo, hi) });
    }
    duration_value(v).map(Step::Work)
}
