//! The languages of full-text search, as a container's full-text policy names them (`en-US`,
//! `de-DE`, `es-ES`, `fr-FR`, `it-IT`, `pt-BR`, `pt-PT`): each one's stop words (the common
//! function words of the language, dropped from texts and terms) and its Snowball stemmer
//! (from `rust-stemmers`, built once per language on first use). Both Portuguese codes share
//! the Portuguese stop words and stemmer.

use std::borrow::Cow;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// A full-text language (English, en-US, unless a policy says otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Language {
    #[default]
    English,
    German,
    Spanish,
    French,
    Italian,
    PortugueseBrazil,
    PortuguesePortugal,
}

/// Every language, in the order the supported list names them.
pub const ALL: [Language; 7] = [
    Language::English,
    Language::German,
    Language::Spanish,
    Language::French,
    Language::Italian,
    Language::PortugueseBrazil,
    Language::PortuguesePortugal,
];

static ENGLISH_STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));
static GERMAN_STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::German));
static SPANISH_STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::Spanish));
static FRENCH_STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::French));
static ITALIAN_STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::Italian));
static PORTUGUESE_STEMMER: LazyLock<Stemmer> =
    LazyLock::new(|| Stemmer::create(Algorithm::Portuguese));

impl Language {
    /// The code the service spells it with.
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en-US",
            Language::German => "de-DE",
            Language::Spanish => "es-ES",
            Language::French => "fr-FR",
            Language::Italian => "it-IT",
            Language::PortugueseBrazil => "pt-BR",
            Language::PortuguesePortugal => "pt-PT",
        }
    }

    /// The language of `code`, in any case (`None` for an unsupported one).
    pub fn from_code(code: &str) -> Option<Language> {
        ALL.into_iter()
            .find(|l| l.code().eq_ignore_ascii_case(code))
    }

    /// The supported codes, comma-separated (for messages).
    pub fn supported() -> String {
        ALL.map(Language::code).join(", ")
    }

    /// Its stop words, sorted (lower case).
    pub fn stop_words(self) -> &'static [&'static str] {
        match self {
            Language::English => stop_words::ENGLISH,
            Language::German => stop_words::GERMAN,
            Language::Spanish => stop_words::SPANISH,
            Language::French => stop_words::FRENCH,
            Language::Italian => stop_words::ITALIAN,
            Language::PortugueseBrazil | Language::PortuguesePortugal => stop_words::PORTUGUESE,
        }
    }

    /// Whether the lower-cased `word` is one of its stop words.
    pub fn is_stop_word(self, word: &str) -> bool {
        self.stop_words().binary_search(&word).is_ok()
    }

    fn stemmer(self) -> &'static Stemmer {
        match self {
            Language::English => &ENGLISH_STEMMER,
            Language::German => &GERMAN_STEMMER,
            Language::Spanish => &SPANISH_STEMMER,
            Language::French => &FRENCH_STEMMER,
            Language::Italian => &ITALIAN_STEMMER,
            Language::PortugueseBrazil | Language::PortuguesePortugal => &PORTUGUESE_STEMMER,
        }
    }

    /// The stem of the lower-cased `word`: itself when its stemmer leaves it unchanged (no
    /// allocation then).
    pub fn stem(self, word: String) -> String {
        match self.stemmer().stem(&word) {
            Cow::Owned(stem) => stem,
            Cow::Borrowed(_) => word,
        }
    }
}

/// The stop words of each language, sorted by code point (searched by bisection).
mod stop_words {
    /// English.
    pub(super) const ENGLISH: &[&str] = &[
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
        "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
        "these", "they", "this", "to", "was", "will", "with",
    ];

    /// German.
    pub(super) const GERMAN: &[&str] = &[
        "aber", "alle", "als", "am", "an", "auch", "auf", "aus", "bei", "bin", "bis", "da", "dann",
        "das", "dass", "dem", "den", "der", "des", "die", "dies", "diese", "dieser", "doch", "du",
        "durch", "ein", "eine", "einem", "einen", "einer", "eines", "er", "es", "für", "hat",
        "hatte", "ich", "ihr", "ihre", "im", "in", "ist", "ja", "kein", "keine", "mit", "nach",
        "nicht", "noch", "nur", "ob", "oder", "sein", "seine", "sich", "sie", "sind", "so", "um",
        "und", "uns", "unter", "vom", "von", "vor", "war", "was", "weil", "wenn", "wie", "wir",
        "wird", "zu", "zum", "zur", "über",
    ];

    /// Spanish.
    pub(super) const SPANISH: &[&str] = &[
        "a", "al", "algo", "como", "con", "de", "del", "el", "ella", "ellas", "ellos", "en",
        "entre", "era", "es", "esta", "este", "esto", "está", "fue", "ha", "hay", "la", "las",
        "le", "les", "lo", "los", "me", "mi", "muy", "más", "no", "nos", "o", "para", "pero",
        "por", "porque", "que", "se", "si", "sin", "sobre", "su", "sus", "también", "te", "tu",
        "un", "una", "uno", "unos", "y", "ya", "yo", "él",
    ];

    /// French.
    pub(super) const FRENCH: &[&str] = &[
        "au", "aux", "avec", "c", "ce", "ces", "cet", "cette", "d", "dans", "de", "des", "du",
        "elle", "elles", "en", "est", "et", "il", "ils", "j", "je", "l", "la", "le", "les", "leur",
        "leurs", "lui", "m", "ma", "mais", "me", "mes", "n", "ne", "nous", "on", "ou", "où", "par",
        "pas", "pour", "qu", "que", "qui", "s", "sa", "se", "ses", "son", "sur", "t", "ta", "te",
        "tu", "un", "une", "vous", "y", "à", "était", "été",
    ];

    /// Italian.
    pub(super) const ITALIAN: &[&str] = &[
        "a", "ad", "agli", "ai", "al", "alla", "alle", "anche", "c", "che", "chi", "ci", "come",
        "con", "d", "da", "dal", "dalla", "dei", "del", "dell", "della", "delle", "di", "e", "gli",
        "ha", "i", "il", "in", "l", "la", "le", "lo", "ma", "mi", "ne", "nel", "nella", "non", "o",
        "per", "più", "quella", "quello", "questa", "questo", "se", "si", "sono", "su", "sul",
        "sulla", "tra", "un", "una", "uno", "è",
    ];

    /// Portuguese.
    pub(super) const PORTUGUESE: &[&str] = &[
        "a", "ao", "aos", "as", "com", "como", "da", "das", "de", "do", "dos", "e", "ela", "elas",
        "ele", "eles", "em", "entre", "era", "essa", "esse", "esta", "este", "eu", "foi", "há",
        "isso", "isto", "já", "lhe", "mais", "mas", "me", "muito", "na", "nas", "no", "nos", "não",
        "o", "os", "ou", "para", "pela", "pelo", "por", "que", "se", "sem", "seu", "seus", "sua",
        "suas", "também", "um", "uma", "é",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_read_in_any_case() {
        let cases = [
            ("en-US", Some(Language::English)),
            ("EN-us", Some(Language::English)),
            ("de-DE", Some(Language::German)),
            ("es-es", Some(Language::Spanish)),
            ("fr-FR", Some(Language::French)),
            ("IT-IT", Some(Language::Italian)),
            ("pt-BR", Some(Language::PortugueseBrazil)),
            ("pt-pt", Some(Language::PortuguesePortugal)),
            ("ja-JP", None),
            ("en", None),
            ("de-DE ", None),
            ("", None),
        ];
        for (code, want) in cases {
            assert_eq!(Language::from_code(code), want, "{code:?}");
        }
        assert_eq!(
            Language::supported(),
            "en-US, de-DE, es-ES, fr-FR, it-IT, pt-BR, pt-PT"
        );
        for language in ALL {
            assert_eq!(Language::from_code(language.code()), Some(language));
        }
    }

    #[test]
    fn stop_word_lists_are_sorted_lower_case_words() {
        for language in ALL {
            let words = language.stop_words();
            assert!(words.len() >= 30, "{language:?}");
            assert!(
                words.windows(2).all(|w| w[0] < w[1]),
                "{language:?} is not sorted and unique"
            );
            for w in words {
                assert_eq!(w.to_lowercase(), *w, "{language:?}");
                assert!(w.chars().all(char::is_alphabetic), "{language:?} {w:?}");
                assert!(language.is_stop_word(w));
            }
        }
        let cases = [
            (Language::English, "the", true),
            (Language::English, "der", false),
            (Language::German, "der", true),
            (Language::German, "über", true),
            (Language::French, "où", true),
            (Language::Spanish, "también", true),
            (Language::Italian, "più", true),
            (Language::PortugueseBrazil, "não", true),
            (Language::PortuguesePortugal, "não", true),
            (Language::German, "haus", false),
        ];
        for (language, word, want) in cases {
            assert_eq!(language.is_stop_word(word), want, "{language:?} {word:?}");
        }
    }

    #[test]
    fn stemmers_take_any_word() {
        // Words of 1 to 12 characters drawn from Latin, accented, combining, Greek, Cyrillic,
        // CJK and Devanagari letters and digits: every stemmer gives a word back.
        let pool: Vec<char> =
            "aeiouyäöüßéèêëàâîïôûùçñáíóúõãœǉİıstrnmlhgvdz09\u{301}\u{308}日本ЖжΩωअ"
                .chars()
                .collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..3000 {
            let len = 1 + (next() % 12) as usize;
            let word: String = (0..len)
                .map(|_| pool[(next() % pool.len() as u64) as usize])
                .collect();
            let word = word.to_lowercase();
            for language in ALL {
                let stem = language.stem(word.clone());
                assert!(
                    stem.len() <= word.len() + 4,
                    "{language:?} {word:?} {stem:?}"
                );
            }
        }
        assert_eq!(Language::English.stem("running".to_owned()), "run");
        assert_eq!(Language::German.stem("häuser".to_owned()), "haus");
        assert_eq!(Language::French.stem("chanteuse".to_owned()), "chanteux");
        assert_eq!(Language::French.stem("chanter".to_owned()), "chant");
    }
}
