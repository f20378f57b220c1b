//! One way to spell a closed vocabulary: each value's word, written and read by serde as a plain
//! string. Derived serde enums also accept `{"approved": null}` for a unit variant, so a package
//! file or log line with a map where a word belongs would pass as that word; these accept only the
//! word, and name the words they know when one is not.

/// `ALL`, `WORDS`, `as_str` and `parse` (each value's word), `Display`, and serde as that word.
/// `noun` names the vocabulary in the error for an unknown word (`unknown lane `x``).
macro_rules! spelled {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        spelled!($ty, "variant" { $($variant => $text),+ });
    };
    ($ty:ident, $noun:literal { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: [$ty; [$($text),+].len()] = [$($ty::$variant),+];

            /// Every value's word, in declaration order.
            pub const WORDS: &'static [&'static str] = &[$($text),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),+
                }
            }

            /// The value `word` spells; `None` for a word this build does not know.
            pub fn parse(word: &str) -> Option<$ty> {
                match word {
                    $($text => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = std::borrow::Cow::<'de, str>::deserialize(d)?;
                $ty::parse(&word).ok_or_else(|| {
                    let known: Vec<String> = Self::WORDS.iter().map(|w| format!("`{w}`")).collect();
                    serde::de::Error::custom(format_args!(
                        "unknown {} `{word}`, expected one of {}",
                        $noun,
                        known.join(", ")
                    ))
                })
            }
        }
    };
}
