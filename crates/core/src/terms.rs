//! What makes a term: the rule a data directory's texts are tokenized by
//! ([`crate::text::tokenize`], whose module docs describe both), which the fingerprint
//! tables carry ([`crate::rabin::Rabin::terms`]) so that tokenizing needs nothing else.

use serde::{Deserialize, Serialize};

/// What makes a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Terms {
    /// A maximal run of alphanumeric characters, whatever the script.
    #[default]
    Words,
    /// As `Words`, but each Han ideograph is a term of its own, and runs of hiragana
    /// and of katakana are terms apart from each other and from the rest.
    Unicode,
}

impl Terms {
    pub fn name(self) -> &'static str {
        match self {
            Terms::Words => "words",
            Terms::Unicode => "unicode",
        }
    }
}

impl std::str::FromStr for Terms {
    type Err = String;
    fn from_str(s: &str) -> Result<Terms, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "words" => Ok(Terms::Words),
            "unicode" => Ok(Terms::Unicode),
            _ => Err(format!("terms `{s}`: expected unicode or words")),
        }
    }
}

impl std::fmt::Display for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
