//! Exact and lossless arithmetic the tests share: conversions of durations, the exact
//! utilisation comparisons [`utilisation_reaches_one`] and [`utilisation_exceeds`], and the
//! little big-number type behind them.
//!
//! Owns numbers only. Must not know about tasks, resources or protocols.

use std::time::Duration;

pub(super) fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

pub(super) fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

pub(super) fn from_nanos(n: u128) -> Duration {
    Duration::from_nanos(n.min(u64::MAX as u128) as u64)
}

/// Whether `Σ numerator/denominator ≥ 1` over `terms` (denominators positive), exactly.
///
/// A floating-point sum decides first whenever it is farther from 1 than its rounding error
/// can reach (a few hundred ulps per term at most, far below the margin used). Only a sum
/// within that margin of 1 is compared exactly: the running sum is kept as a reduced fraction
/// of `u128`s while it fits, which it does for periods with a common multiple below 2^128
/// (any set of whole microseconds or milliseconds in practice), and continues in arbitrary
/// precision otherwise. Without the first step, many distinct periods made every exact sum
/// a number of thousands of digits.
pub(super) fn utilisation_reaches_one(terms: impl Iterator<Item = (u128, u128)> + Clone) -> bool {
    let (mut sum, mut count) = (0.0_f64, 0.0_f64);
    for (c, t) in terms.clone() {
        sum += to_f64(c) / to_f64(t);
        count += 1.0;
    }
    // Each term is within 2 ulps of its value and the sum of n terms within n ulps of theirs:
    // (n + 2)·ε·max(sum, 1) bounds the error; the margin is 16 times that.
    let margin = 16.0 * (count + 2.0) * f64::EPSILON * sum.max(1.0);
    if sum < 1.0 - margin {
        return false;
    }
    if sum > 1.0 + margin {
        return true;
    }
    // Below 1 the numerator is smaller than the denominator, so both fit when it does.
    let (mut num, mut den): (u128, u128) = (0, 1);
    let mut wide: Option<(BigNat, BigNat)> = None;
    for (c, t) in terms {
        if c == 0 {
            continue;
        }
        if c >= t {
            return true;
        }
        if let Some((wn, wd)) = &mut wide {
            *wn = wn.mul(&BigNat::from(t)).add(&wd.mul(&BigNat::from(c)));
            *wd = wd.mul(&BigNat::from(t));
            if *wn >= *wd {
                return true;
            }
            continue;
        }
        let g = gcd(den, t);
        let sum = (den / g).checked_mul(t).and_then(|d| {
            let n = num.checked_mul(t / g)?.checked_add(c.checked_mul(den / g)?)?;
            Some((n, d))
        });
        match sum {
            Some((n, d)) => {
                if n >= d {
                    return true;
                }
                let h = gcd(n, d);
                (num, den) = (n / h, d / h);
            }
            None => {
                let (wn, wd) = (BigNat::from(num), BigNat::from(den));
                let n = wn.mul(&BigNat::from(t)).add(&wd.mul(&BigNat::from(c)));
                let d = wd.mul(&BigNat::from(t));
                if n >= d {
                    return true;
                }
                wide = Some((n, d));
            }
        }
    }
    false
}

/// Whether `Σ numerator/denominator > cpus` over `terms` (denominators positive), exactly: the
/// strict comparison a necessary condition needs, since a sum of exactly `cpus` can still be
/// met. The same two steps as [`utilisation_reaches_one`]: a floating-point sum decides when it
/// is clear of `cpus` by more than its rounding error, else the sum is kept exact. The terms
/// are never negative, so a partial sum above `cpus` already decides.
pub(super) fn utilisation_exceeds(terms: impl Iterator<Item = (u128, u128)> + Clone, cpus: u128) -> bool {
    let (mut sum, mut count) = (0.0_f64, 0.0_f64);
    for (c, t) in terms.clone() {
        sum += to_f64(c) / to_f64(t);
        count += 1.0;
    }
    let target = to_f64(cpus);
    let margin = 16.0 * (count + 2.0) * f64::EPSILON * sum.max(target).max(1.0);
    if sum < target - margin {
        return false;
    }
    if sum > target + margin {
        return true;
    }
    let limit = BigNat::from(cpus);
    let (mut num, mut den): (u128, u128) = (0, 1);
    let mut wide: Option<(BigNat, BigNat)> = None;
    for (c, t) in terms {
        if c == 0 {
            continue;
        }
        if let Some((wn, wd)) = &mut wide {
            *wn = wn.mul(&BigNat::from(t)).add(&wd.mul(&BigNat::from(c)));
            *wd = wd.mul(&BigNat::from(t));
            if *wn > wd.mul(&limit) {
                return true;
            }
            continue;
        }
        let g = gcd(den, t);
        let sum = (den / g).checked_mul(t).and_then(|d| {
            let n = num.checked_mul(t / g)?.checked_add(c.checked_mul(den / g)?)?;
            Some((n, d))
        });
        match sum {
            Some((n, d)) => {
                if d.checked_mul(cpus).is_some_and(|bound| n > bound) {
                    return true;
                }
                let h = gcd(n, d);
                (num, den) = (n / h, d / h);
            }
            None => {
                let (wn, wd) = (BigNat::from(num), BigNat::from(den));
                let n = wn.mul(&BigNat::from(t)).add(&wd.mul(&BigNat::from(c)));
                let d = wd.mul(&BigNat::from(t));
                if n > d.mul(&limit) {
                    return true;
                }
                wide = Some((n, d));
            }
        }
    }
    false
}

/// `v` rounded to the nearest `f64`, through 64 bits when it fits (a much cheaper conversion).
fn to_f64(v: u128) -> f64 {
    u64::try_from(v).map_or(v as f64, |v| v as f64)
}

/// A natural number in base 2^64, least significant limb first, without trailing zero limbs:
/// just enough arithmetic for [`utilisation_reaches_one`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BigNat(Vec<u64>);

impl From<u128> for BigNat {
    fn from(v: u128) -> BigNat {
        BigNat(vec![v as u64, (v >> 64) as u64]).trimmed()
    }
}

impl BigNat {
    fn trimmed(mut self) -> BigNat {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    pub(super) fn add(&self, other: &BigNat) -> BigNat {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u128;
        for k in 0..self.0.len().max(other.0.len()) {
            let s = carry + *self.0.get(k).unwrap_or(&0) as u128 + *other.0.get(k).unwrap_or(&0) as u128;
            out.push(s as u64);
            carry = s >> 64;
        }
        out.push(carry as u64);
        BigNat(out).trimmed()
    }

    pub(super) fn mul(&self, other: &BigNat) -> BigNat {
        let mut out = vec![0u64; self.0.len() + other.0.len() + 1];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in other.0.iter().enumerate() {
                let s = out[i + j] as u128 + a as u128 * b as u128 + carry;
                out[i + j] = s as u64;
                carry = s >> 64;
            }
            let mut k = i + other.0.len();
            while carry != 0 {
                let s = out[k] as u128 + carry;
                out[k] = s as u64;
                carry = s >> 64;
                k += 1;
            }
        }
        BigNat(out).trimmed()
    }
}

impl PartialOrd for BigNat {
    fn partial_cmp(&self, other: &BigNat) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigNat {
    fn cmp(&self, other: &BigNat) -> std::cmp::Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

pub(super) fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
