//! The tokens of full-text texts and terms, kept per thread so each distinct text is tokenized
//! (split, lower-cased, stop words dropped, stemmed) once per query rather than once per call: a
//! ranked query evaluates many full-text calls over the same item text and the same terms (the
//! global statistics query one `FullTextContains` per term, each component query every
//! component's score). What a text tokenizes to depends only on the text and its language, so a
//! kept entry is always exact; the cache only saves work, and the calls are charged their work
//! either way ([`super::fulltext`]).
//!
//! The cache is bounded by the bytes it holds and emptied when it would hold more.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::fulltext_language::Language;

/// Bytes (texts and their tokens) kept per thread before the cache is emptied.
const CACHED_BYTES: usize = 16 * 1024 * 1024;

/// A text's tokens, in order, and how many times each occurs.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Tokens {
    pub list: Vec<String>,
    pub counts: HashMap<String, usize>,
}

impl Tokens {
    /// The tokens of `text` in `language`: its words lower-cased, without stop words, stemmed.
    pub(super) fn of(text: &str, language: Language) -> Self {
        let list: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .filter(|w| !language.is_stop_word(w))
            .map(|w| language.stem(w))
            .collect();
        let mut counts: HashMap<String, usize> = HashMap::with_capacity(list.len());
        for t in &list {
            *counts.entry(t.clone()).or_default() += 1;
        }
        Self { list, counts }
    }

    /// How many times the token sequence `phrase` occurs (0 for an empty phrase): a lookup for
    /// one token, a scan for a phrase of several.
    pub(super) fn occurrences(&self, phrase: &[String]) -> usize {
        match phrase {
            [] => 0,
            [one] => self.counts.get(one).copied().unwrap_or(0),
            _ if phrase.len() > self.list.len() => 0,
            _ => self
                .list
                .windows(phrase.len())
                .filter(|w| *w == phrase)
                .count(),
        }
    }

    fn bytes(&self) -> usize {
        self.list.iter().map(|t| 2 * t.len() + 48).sum()
    }
}

#[derive(Default)]
struct Cache {
    by_language: HashMap<Language, HashMap<Box<str>, Rc<Tokens>>>,
    bytes: usize,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// The tokens of `text` in `language`, from the cache when it holds them.
pub(super) fn tokens_of(text: &str, language: Language) -> Rc<Tokens> {
    let kept = CACHE.with(|c| {
        c.borrow()
            .by_language
            .get(&language)
            .and_then(|m| m.get(text))
            .cloned()
    });
    if let Some(tokens) = kept {
        return tokens;
    }
    let tokens = Rc::new(Tokens::of(text, language));
    let size = text.len() + tokens.bytes();
    if size <= CACHED_BYTES / 4 {
        CACHE.with(|c| {
            let mut cache = c.borrow_mut();
            if cache.bytes + size > CACHED_BYTES {
                cache.by_language.clear();
                cache.bytes = 0;
            }
            cache.bytes += size;
            cache
                .by_language
                .entry(language)
                .or_default()
                .insert(text.into(), tokens.clone());
        });
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrase(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn occurrences_count_tokens_and_phrases() {
        let t = Tokens::of(
            "the fox runs; the fox running home, a fox",
            Language::English,
        );
        assert_eq!(t.list, ["fox", "run", "fox", "run", "home", "fox"]);
        let cases: &[(&[&str], usize)] = &[
            (&[], 0),
            (&["fox"], 3),
            (&["run"], 2),
            (&["cat"], 0),
            (&["fox", "run"], 2),
            (&["run", "fox"], 1),
            (&["fox", "run", "home"], 1),
            (&["fox", "run", "home", "fox", "x", "y", "z"], 0),
        ];
        for (words, want) in cases {
            assert_eq!(t.occurrences(&phrase(words)), *want, "{words:?}");
        }
    }

    #[test]
    fn kept_tokens_equal_fresh_ones_in_each_language() {
        for language in crate::sql::fulltext_language::ALL {
            for text in ["Die Häuser und das Haus", "running runs", "", "l'homme"] {
                let first = tokens_of(text, language);
                let again = tokens_of(text, language);
                assert!(Rc::ptr_eq(&first, &again));
                assert_eq!(*first, Tokens::of(text, language));
            }
        }
    }
}
