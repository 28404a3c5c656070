//! Full-text search: `FullTextContains`, `FullTextContainsAll`, `FullTextContainsAny`, and the
//! functions the hybrid search plan's queries use: `_FullTextWordCount(text)` (tokens in a text)
//! and `_FullTextScore(text, [terms], documentCount, totalWordCount, [hitCounts])`, the BM25 score
//! of a text given the statistics of the whole container (which the client gathers first with
//! the plan's global statistics query, and writes into the component queries).
//!
//! Tokenization, in the language of the full-text path the function reads
//! ([`super::fulltext_language`]): the text is split at every character that is not a letter or
//! a digit, each word is lower-cased, the language's stop words are dropped, and every remaining
//! word is reduced to its stem by the language's Snowball stemmer. A term is tokenized the same
//! way and matches where its stems occur in sequence (a phrase), so "running" matches "runs";
//! BM25 counts stems.
//!
//! The language reaches a call through its name: `super::search::prepare` renames each call to
//! [`marked`]`(name, language)`, a name the parser cannot produce (it holds `:` and the
//! language's code), so a query cannot choose its own language. A call left unmarked (outside a
//! prepared item query) tokenizes English.

use std::rc::Rc;

use serde_json::Value;

use super::fulltext_language::Language;
use super::fulltext_tokens::{tokens_of, Tokens};
use super::meter::Meter;
use super::sql_error::SqlError;
use super::value::Val;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization.
const B: f64 = 0.75;
/// Most terms one call may name.
pub const MAX_TERMS: usize = 100;

/// The functions whose tokenization depends on the language (`FullTextScore` is planned into
/// `_FullTextScore`, never evaluated).
const LANGUAGE_FUNCTIONS: [&str; 5] = [
    "FULLTEXTCONTAINS",
    "FULLTEXTCONTAINSALL",
    "FULLTEXTCONTAINSANY",
    "_FULLTEXTWORDCOUNT",
    "_FULLTEXTSCORE",
];

/// What separates a function's name from its language in a marked name.
const MARK: char = ':';

/// The marked name of the full-text function `name` (upper-cased) tokenizing `language`;
/// `None` for a name that is not a full-text function (a marked name included).
pub fn marked(name: &str, language: Language) -> Option<String> {
    LANGUAGE_FUNCTIONS
        .contains(&name)
        .then(|| format!("{name}{MARK}{}", language.code()))
}

/// The function and language of a (possibly marked) name.
fn unmark(name: &str) -> Result<(&str, Language), SqlError> {
    match name.split_once(MARK) {
        None => Ok((name, Language::default())),
        Some((base, code)) => Language::from_code(code)
            .map(|language| (base, language))
            .ok_or_else(|| SqlError::new(format!("{base} has no full-text language {code:?}."))),
    }
}

/// The tokens of `text` in `language`: its words lower-cased, without stop words, stemmed.
pub fn tokens(text: &str, language: Language) -> Vec<String> {
    Tokens::of(text, language).list
}

/// BM25 of one document: `doc` its tokens, `terms` each term's tokens, over a corpus of
/// `documents` documents holding `total_words` tokens, `hits[i]` of which contain term `i`.
fn bm25(doc: &Tokens, terms: &[Rc<Tokens>], documents: f64, total_words: f64, hits: &[f64]) -> f64 {
    if documents <= 0.0 {
        return 0.0;
    }
    let average = (total_words / documents).max(f64::MIN_POSITIVE);
    let length = doc.list.len() as f64;
    terms
        .iter()
        .enumerate()
        .map(|(i, term)| {
            let tf = doc.occurrences(&term.list) as f64;
            if tf == 0.0 {
                return 0.0;
            }
            let n = hits.get(i).copied().unwrap_or(0.0).clamp(0.0, documents);
            let idf = ((documents - n + 0.5) / (n + 0.5) + 1.0).ln();
            idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average))
        })
        .sum()
}

fn text_of<'v>(args: &[Option<&'v Value>], i: usize) -> Option<&'v str> {
    args.get(i).copied().flatten().and_then(Value::as_str)
}

/// The terms of a call: strings from `from` on, or one array of strings there. Each term is
/// charged to `meter` (one unit, and its bytes) before it is looked up or tokenized.
fn terms_of(
    name: &str,
    args: &[Option<&Value>],
    from: usize,
    language: Language,
    meter: &Meter,
) -> Result<Vec<Rc<Tokens>>, SqlError> {
    let values: Vec<&Value> = match args.get(from).copied().flatten() {
        Some(Value::Array(items)) if args.len() == from + 1 => items.iter().collect(),
        _ => args[from.min(args.len())..]
            .iter()
            .map(|v| {
                v.ok_or_else(|| {
                    SqlError::new(format!(
                        "{name}'s search terms must be strings; one is undefined."
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    if values.is_empty() || values.len() > MAX_TERMS {
        return Err(too_many_terms(name, values.len()));
    }
    values
        .into_iter()
        .map(|v| match v {
            Value::String(s) => {
                meter.charge(1)?;
                meter.charge_bytes(s.len())?;
                Ok(tokens_of(s, language))
            }
            other => Err(SqlError::new(format!(
                "{name}'s search terms must be strings, not {other}."
            ))),
        })
        .collect()
}

/// The refusal of a call naming `given` search terms, outside 1 to [`MAX_TERMS`].
pub fn too_many_terms(name: &str, given: usize) -> SqlError {
    SqlError::new(format!(
        "{name} takes 1 to {MAX_TERMS} search terms (the emulator's limit per call), not {given}."
    ))
}

fn number(x: f64) -> Val {
    serde_json::Number::from_f64(x).map(Value::Number)
}

/// The full-text function `name` (upper-cased, possibly [`marked`] with its language), or `None`
/// for another name. A text argument that is not a string gives undefined (a word count of 0).
/// Each call is charged its text's bytes and each term; a text or term is tokenized once per
/// thread while it stays cached (`super::fulltext_tokens`).
pub fn call(name: &str, args: &[Option<&Value>], meter: &Meter) -> Result<Option<Val>, SqlError> {
    let (name, language) = unmark(name)?;
    let text = match name {
        "FULLTEXTCONTAINS"
        | "FULLTEXTCONTAINSALL"
        | "FULLTEXTCONTAINSANY"
        | "_FULLTEXTWORDCOUNT"
        | "_FULLTEXTSCORE" => text_of(args, 0),
        "FULLTEXTSCORE" | "RRF" => {
            return Err(SqlError::new(format!(
                "{name} is only allowed in an ORDER BY RANK clause."
            )))
        }
        _ => return Ok(None),
    };
    if let Some(t) = text {
        meter.charge_bytes(t.len())?;
    }
    let doc = match text {
        Some(t) => tokens_of(t, language),
        None => Rc::new(Tokens::default()),
    };
    Ok(Some(match name {
        "_FULLTEXTWORDCOUNT" => Some(Value::from(doc.list.len())),
        "FULLTEXTCONTAINS" | "FULLTEXTCONTAINSALL" | "FULLTEXTCONTAINSANY" => {
            let terms = terms_of(name, args, 1, language, meter)?;
            if name == "FULLTEXTCONTAINS" && terms.len() != 1 {
                return Err(SqlError::new("FullTextContains takes one search term."));
            }
            if text.is_none() {
                Some(Value::Bool(false))
            } else {
                let found = |t: &Rc<Tokens>| doc.occurrences(&t.list) > 0;
                let hit = if name == "FULLTEXTCONTAINSANY" {
                    terms.iter().any(found)
                } else {
                    terms.iter().all(found)
                };
                Some(Value::Bool(hit))
            }
        }
        _ => {
            // _FULLTEXTSCORE(text, [terms], documentCount, totalWordCount, [hitCounts])
            let Some(Value::Array(_)) = args.get(1).copied().flatten() else {
                return Err(SqlError::new(
                    "_FullTextScore's second argument must be the array of terms.",
                ));
            };
            let terms = terms_of(name, &args[..2], 1, language, meter)?;
            let count = |i: usize| args.get(i).copied().flatten().and_then(Value::as_f64);
            let (Some(documents), Some(words)) = (count(2), count(3)) else {
                return Err(SqlError::new(
                    "_FullTextScore needs the document count and total word count.",
                ));
            };
            let hits: Vec<f64> = match args.get(4).copied().flatten() {
                Some(Value::Array(items)) if items.len() == terms.len() => {
                    items.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect()
                }
                _ => {
                    return Err(SqlError::new(
                        "_FullTextScore needs one hit count per term.",
                    ))
                }
            };
            if text.is_none() {
                None
            } else {
                number(bm25(&doc, &terms, documents, words, &hits))
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, args: &[Value]) -> Result<Val, SqlError> {
        let refs: Vec<Option<&Value>> = args.iter().map(Some).collect();
        Ok(call(name, &refs, &Meter::unlimited())?.unwrap())
    }

    fn in_language(name: &str, language: Language, args: &[Value]) -> Val {
        let marked = marked(name, language).unwrap();
        let refs: Vec<Option<&Value>> = args.iter().map(Some).collect();
        call(&marked, &refs, &Meter::unlimited()).unwrap().unwrap()
    }

    #[test]
    fn tokens_are_lower_cased_stemmed_words_without_stop_words() {
        use Language::*;
        let cases: &[(Language, &str, &[&str])] = &[
            (
                English,
                "The Quick, brown-fox is 42!",
                &["quick", "brown", "fox", "42"],
            ),
            (English, "to be or not", &[]),
            (English, "Running runs ran", &["run", "run", "ran"]),
            (English, "Foxes JUMPING quickly", &["fox", "jump", "quick"]),
            (German, "Die Häuser und das Haus", &["haus", "haus"]),
            (
                German,
                "Kinder lesen Bücher über ein Buch",
                &["kind", "les", "buch", "buch"],
            ),
            (
                French,
                "La chanteuse va chanter",
                &["chanteux", "va", "chant"],
            ),
            (French, "les maisons et la maison", &["maison", "maison"]),
            (French, "l'homme", &["homm"]),
            (Spanish, "Las casas y la casa", &["cas", "cas"]),
            (Spanish, "corriendo, correr", &["corr", "corr"]),
            (Italian, "Le case della casa", &["cas", "cas"]),
            (Italian, "cantando cantare", &["cant", "cant"]),
            (PortugueseBrazil, "Os livros e o livro", &["livr", "livr"]),
            (PortuguesePortugal, "Os livros e o livro", &["livr", "livr"]),
            (PortugueseBrazil, "correndo, correr", &["corr", "corr"]),
        ];
        for (language, text, want) in cases {
            assert_eq!(tokens(text, *language), *want, "{language:?} {text:?}");
        }
    }

    #[test]
    fn marked_names_carry_their_language() {
        assert_eq!(
            marked("FULLTEXTCONTAINS", Language::German).as_deref(),
            Some("FULLTEXTCONTAINS:de-DE")
        );
        assert_eq!(
            marked("_FULLTEXTSCORE", Language::PortuguesePortugal).as_deref(),
            Some("_FULLTEXTSCORE:pt-PT")
        );
        // Neither another function, nor one already marked, nor the RANK-only FullTextScore.
        assert_eq!(marked("CONTAINS", Language::German), None);
        assert_eq!(marked("FULLTEXTCONTAINS:de-DE", Language::German), None);
        assert_eq!(marked("FULLTEXTSCORE", Language::German), None);
        for language in crate::sql::fulltext_language::ALL {
            let name = marked("_FULLTEXTWORDCOUNT", language).unwrap();
            assert_eq!(unmark(&name).unwrap(), ("_FULLTEXTWORDCOUNT", language));
        }
        assert_eq!(
            unmark("FULLTEXTCONTAINS").unwrap(),
            ("FULLTEXTCONTAINS", Language::English)
        );
        assert!(unmark("FULLTEXTCONTAINS:ja-JP").is_err());
    }

    #[test]
    fn contains_matches_inflected_forms_in_the_call_language() {
        use Language::*;
        let cases: &[(Language, &str, &str, bool)] = &[
            (English, "The fox runs home", "running", true),
            (English, "The fox runs home", "ran", false),
            (English, "Zwei Häuser", "Haus", false),
            (German, "Zwei Häuser", "Haus", true),
            (German, "Zwei Häuser", "Hund", false),
            (French, "Elle aime chanter", "chantait", true),
            (Spanish, "Una canción", "canciones", true),
            (Italian, "Tre libri", "libro", true),
            (PortugueseBrazil, "Dois livros", "livro", true),
        ];
        for (language, text, term, want) in cases {
            assert_eq!(
                in_language("FULLTEXTCONTAINS", *language, &[json!(text), json!(term)]),
                Some(json!(want)),
                "{language:?} {text:?} {term:?}"
            );
        }
        // Unmarked calls tokenize English.
        assert_eq!(
            run("FULLTEXTCONTAINS", &[json!("Zwei Häuser"), json!("Haus")]).unwrap(),
            Some(json!(false))
        );
    }

    #[test]
    fn phrases_match_stems_in_sequence() {
        let t = json!("She was running quickly to the houses");
        let cases = [
            ("runs quick", true),
            ("run quickly house", true),
            ("quick runs", false),
            ("running houses", false),
        ];
        for (term, want) in cases {
            assert_eq!(
                run("FULLTEXTCONTAINS", &[t.clone(), json!(term)]).unwrap(),
                Some(json!(want)),
                "{term}"
            );
        }
        assert_eq!(
            run(
                "FULLTEXTCONTAINSALL",
                &[t.clone(), json!("house"), json!("ran")]
            )
            .unwrap(),
            Some(json!(false))
        );
        assert_eq!(
            run("FULLTEXTCONTAINSANY", &[t, json!("house"), json!("ran")]).unwrap(),
            Some(json!(true))
        );
    }

    #[test]
    fn bm25_and_word_counts_count_stems() {
        // "runs running ran": 3 tokens, the term "run" (stem of "runs" and "running") occurs twice.
        let text = json!("runs running ran");
        assert_eq!(
            run("_FULLTEXTWORDCOUNT", std::slice::from_ref(&text)).unwrap(),
            Some(json!(3))
        );
        let score = run(
            "_FULLTEXTSCORE",
            &[text, json!(["run"]), json!(4), json!(12), json!([1])],
        )
        .unwrap()
        .unwrap()
        .as_f64()
        .unwrap();
        // By hand: idf = ln((4-1+0.5)/(1+0.5)+1), tf 2, length 3 against an average of 3.
        let idf = ((3.5f64 / 1.5) + 1.0).ln();
        let want = idf * 2.0 * 2.2 / (2.0 + 1.2);
        assert!((score - want).abs() < 1e-12, "{score} {want}");
        // German counts its own stems: "Häuser" and "Hauses" are both "haus".
        let german = in_language(
            "_FULLTEXTSCORE",
            Language::German,
            &[
                json!("Häuser des Hauses"),
                json!(["Haus"]),
                json!(4),
                json!(8),
                json!([1]),
            ],
        );
        let want = idf * 2.0 * 2.2 / (2.0 + 1.2 * (0.25 + 0.75 * 2.0 / 2.0));
        assert!((german.unwrap().as_f64().unwrap() - want).abs() < 1e-12);
    }

    #[test]
    fn contains_matches_phrases_all_and_any() {
        let t = json!("John Smith moved to the United States.");
        assert_eq!(
            run("FULLTEXTCONTAINS", &[t.clone(), json!("john")]).unwrap(),
            Some(json!(true))
        );
        assert_eq!(
            run("FULLTEXTCONTAINS", &[t.clone(), json!("united states")]).unwrap(),
            Some(json!(true))
        );
        assert_eq!(
            run("FULLTEXTCONTAINS", &[t.clone(), json!("states united")]).unwrap(),
            Some(json!(false))
        );
        assert_eq!(
            run(
                "FULLTEXTCONTAINSALL",
                &[t.clone(), json!("john"), json!("mary")]
            )
            .unwrap(),
            Some(json!(false))
        );
        assert_eq!(
            run(
                "FULLTEXTCONTAINSANY",
                &[t.clone(), json!("john"), json!("mary")]
            )
            .unwrap(),
            Some(json!(true))
        );
        assert_eq!(
            run("FULLTEXTCONTAINS", &[json!(3), json!("john")]).unwrap(),
            Some(json!(false))
        );
        assert_eq!(run("_FULLTEXTWORDCOUNT", &[t]).unwrap(), Some(json!(5)));
        assert!(run("FULLTEXTCONTAINS", &[json!("a"), json!(1)]).is_err());
        assert!(run("FULLTEXTSCORE", &[json!("a"), json!("a")]).is_err());
    }

    #[test]
    fn bm25_ranks_rarer_and_denser_matches_higher() {
        // Corpus of 4 documents, 20 words; "fox" in 1 document, "dog" in 3.
        let score = |text: &str, term: &str, hits: u64| {
            run(
                "_FULLTEXTSCORE",
                &[
                    json!(text),
                    json!([term]),
                    json!(4),
                    json!(20),
                    json!([hits]),
                ],
            )
            .unwrap()
            .unwrap()
            .as_f64()
            .unwrap()
        };
        assert!(score("quick fox jumps high", "fox", 1) > score("quick dog jumps high", "dog", 3));
        assert!(score("fox fox runs", "fox", 1) > score("fox walks slowly", "fox", 1));
        assert_eq!(score("nothing here", "fox", 1), 0.0);
        // By hand: idf = ln((4-1+0.5)/(1+0.5)+1), tf 1, length 4 = average 5 * 0.8.
        let idf = ((3.5f64 / 1.5) + 1.0).ln();
        let want = idf * 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * 4.0 / 5.0));
        assert!((score("quick fox jumps high", "fox", 1) - want).abs() < 1e-12);
    }
}
