//! Publication dates: a document's `published_at` (or `date`) read into one
//! instant, milliseconds since 1970-01-01T00:00:00Z, so that documents can be ordered
//! by when they were written rather than when they arrived.
//!
//! Accepted, and nothing else (a date that cannot be read is a clear per-document
//! error, never a silent fallback to the arrival time):
//! - RFC 3339: `2026-11-27T08:00:00Z`, `2026-11-27T09:00:00.250+01:00` (the offset
//!   applied; fractions of a millisecond dropped);
//! - `YYYY-MM-DD`: that day's first instant in UTC;
//! - `YYYY` (exactly four digits): the year's first instant in UTC;
//! - Unix seconds: an integer of any other length, optionally negative, optionally
//!   with a fraction (`1700000000`, `1700000000.5`); a JSON number is read as its text.
//!
//! Years 0000-9999 only (RFC 3339's range; Unix seconds within it). Leading and
//! trailing white space is ignored.

use time::format_description::well_known::Rfc3339;
use time::{Date, Month, OffsetDateTime};

/// A `published_at` that is not a date in an accepted form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("published_at {value:?} is not a date: give RFC 3339 (2026-11-27T08:00:00Z), YYYY-MM-DD, YYYY or Unix seconds")]
pub struct BadDate {
    pub value: String,
}

/// First and last second of years 0000-9999.
const FIRST: i64 = -62_167_219_200;
const LAST: i64 = 253_402_300_799;

/// `value` as milliseconds since the Unix epoch (see the module docs for the forms).
pub fn parse_published(value: &str) -> Result<i64, BadDate> {
    read(value.trim()).ok_or_else(|| BadDate { value: value.to_string() })
}

fn read(s: &str) -> Option<i64> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if s.len() == 4 && digits(s) {
        return day(s.parse().ok()?, 1, 1);
    }
    if let [y, m, d] = s.split('-').collect::<Vec<_>>()[..] {
        if y.len() == 4 && m.len() == 2 && d.len() == 2 && digits(y) && digits(m) && digits(d) {
            return day(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
        }
    }
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    let magnitude = whole.strip_prefix('-').unwrap_or(whole);
    if digits(magnitude) && (fraction.is_empty() || digits(fraction)) && !(s.contains('.') && fraction.is_empty()) {
        let seconds: i64 = whole.parse().ok().filter(|x| (FIRST..=LAST).contains(x))?;
        let ms: i64 = format!("{:0<3}", &fraction[..fraction.len().min(3)]).parse().ok()?;
        return Some(seconds * 1000 + if whole.starts_with('-') { -ms } else { ms });
    }
    let t = OffsetDateTime::parse(s, &Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos().div_euclid(1_000_000)).ok()
}

fn day(y: i32, m: u8, d: u8) -> Option<i64> {
    let date = Date::from_calendar_date(y, Month::try_from(m).ok()?, d).ok()?;
    Some(date.midnight().assume_utc().unix_timestamp() * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Days from 1970-01-01 to a civil date, by counting: the brute-force reference.
    fn days_by_counting(y: i64, m: u32, d: u32) -> i64 {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_days = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut days = 0i64;
        if y >= 1970 {
            days += (1970..y).map(|y| if leap(y) { 366 } else { 365 }).sum::<i64>();
        } else {
            days -= (y..1970).map(|y| if leap(y) { 366 } else { 365 }).sum::<i64>();
        }
        days + (1..m).map(|m| month_days(y, m)).sum::<i64>() + i64::from(d) - 1
    }

    #[test]
    fn the_four_forms() {
        assert_eq!(parse_published("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_published("2026-11-27T09:00:00.250+01:00"), Ok(1_795_766_400_250));
        assert_eq!(parse_published("2026-11-27"), Ok(1_795_737_600_000));
        assert_eq!(parse_published("2026"), Ok(days_by_counting(2026, 1, 1) * 86_400_000));
        assert_eq!(parse_published("1795737600"), Ok(1_795_737_600_000));
        assert_eq!(parse_published(" 1795737600.5 "), Ok(1_795_737_600_500));
        assert_eq!(parse_published("-86400"), Ok(-86_400_000));
        assert_eq!(parse_published("-1.25"), Ok(-1_250));
        // The mail corpus's form.
        assert_eq!(
            parse_published("2002-08-21T04:02:06+00:00"),
            Ok((days_by_counting(2002, 8, 21) * 86_400 + 4 * 3600 + 126) * 1000)
        );
    }

    #[test]
    fn anything_else_is_refused_with_its_value() {
        for bad in [
            "",
            "next tuesday",
            "2026-13-01",
            "2026-02-30",
            "2026-1-5",
            "2026-11",
            "12345.",
            ".5",
            "1e9",
            "2026-11-27 08:00",
            "Fri, 27 Nov 2026 08:00:00 +0000",
            "2026-11-27T08:00:00",
            "99999999999999",
        ] {
            let e = parse_published(bad).unwrap_err();
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("is not a date: give RFC 3339"), "{e}");
        }
    }

    proptest! {
        /// Every form of one civil date and time is the same instant, the reference's.
        #[test]
        fn forms_agree_with_counting(y in 0i64..=9999, m in 1u32..=12, d in 1u32..=28, h in 0u32..24, mi in 0u32..60, s in 0u32..60, off in -14i64*60..=14*60) {
            let midnight = days_by_counting(y, m, d) * 86_400_000;
            prop_assert_eq!(parse_published(&format!("{y:04}-{m:02}-{d:02}")), Ok(midnight));
            let at = midnight + i64::from(h * 3600 + mi * 60 + s) * 1000;
            prop_assert_eq!(parse_published(&format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")), Ok(at));
            if (FIRST..=LAST).contains(&(at / 1000)) {
                prop_assert_eq!(parse_published(&(at / 1000).to_string()), if (1000..10000).contains(&(at / 1000)) { Ok(days_by_counting(at / 1000, 1, 1) * 86_400_000) } else { Ok(at) });
            }
            // An offset east of UTC is an earlier instant.
            let sign = if off < 0 { '-' } else { '+' };
            let text = format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}{sign}{:02}:{:02}", off.abs() / 60, off.abs() % 60);
            if let Ok(t) = parse_published(&text) {
                prop_assert_eq!(t, at - off * 60_000);
            }
        }
    }
}
