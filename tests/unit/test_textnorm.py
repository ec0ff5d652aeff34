"""Text normalisation before the category classifier reads a task (enforce/textnorm.py): no model needed."""
import unicodedata

import pytest

from veriguard.enforce.embedder import lexicon
from veriguard.enforce.textnorm import _LOOKALIKE, decode_escapes, foreign_words, normalise, readable, segment

KNOWN = lexicon() | {"browse", "airbnb"}


def norm(text: str) -> str:
    return normalise(text, KNOWN).text


@pytest.mark.parametrize("ch", ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u202e", "\u2066",
                                "\u2062", "\u180e", "\u034f", "\ufe0f", "\U000e0041", "\U000e0101", "\u3164",
                                "\u115f", "\u2800"])
def test_invisible_characters_are_removed(ch):
    n = normalise(ch.join("hotel") + " in Rome", KNOWN)
    assert n.text == "hotel in Rome" and not n.unreadable
    assert any("invisible" in c for c in n.changes)


@pytest.mark.parametrize("text,expected", [
    ("\uff48\uff4f\uff54\uff45\uff4c", "hotel"),                      # fullwidth
    ("\U0001d421\U0001d428\U0001d42d\U0001d41e\U0001d425", "hotel"),  # mathematical bold
    ("\u24d7\u24de\u24e3\u24d4\u24db", "hotel"),                      # circled
    ("h\u043et\u0435l", "hotel"),                                     # Cyrillic o, e
    ("fl\u0456ght", "flight"),                                        # Cyrillic i
    ("\u0455h\u03bf\u0440", "shop"),                                  # Cyrillic dze, Greek omicron, Cyrillic er
    ("j\u0585b", "job"),                                              # Armenian oh
    ("\u0299\u1d1c\u028f", "buy"),                                    # small capitals
    ("\U0001F172\U0001F170\U0001F181", "CAR"),                        # negative squared
    ("\U0001F1ED\U0001F1F4\U0001F1F9\U0001F1EA\U0001F1F1", "HOTEL"),  # regional indicators
    ("h\u00f4t\u00e9l", "hotel"),                                     # diacritics
    ("h\u0337o\u0337t\u0337e\u0337l\u0337", "hotel"),                 # combining overlay
    ("\u0192light", "flight"),
])
def test_look_alike_letters_read_as_latin(text, expected):
    assert norm(text) == expected


def test_every_look_alike_reads_as_plain_latin():
    assert all(v.isascii() and v.isalpha() for v in _LOOKALIKE.values())
    assert not [chr(k) for k in _LOOKALIKE if chr(k).isascii()]
    assert not [(chr(k), v) for k, v in _LOOKALIKE.items() if normalise(chr(k)).text != v]


@pytest.mark.parametrize("text,expected", [
    ("Book a h o t e l", "Book a hotel"),
    ("Book a h.o.t.e.l", "Book a hotel"),
    ("Book a h-o-t-e-l", "Book a hotel"),
    ("Book a h . o . t . e . l", "Book a hotel"),
    ("Book a h_o-t.e l", "Book a hotel"),         # mixed separators, five letters
    ("Book a f l i g h t", "Book a flight"),      # the article stays a word
    ("A p p l y now", "Apply now"),
    ("h\no\nt\ne\nl", "hotel"),
    ("B*U*Y it", "BUY it"),
    ("Book a ho-tel", "Book a hotel"),
    ("Book a flig ht", "Book a flight"),
])
def test_spaced_and_split_letters_are_joined(text, expected):
    assert norm(text) == expected


@pytest.mark.parametrize("text", ["rent a kar in Dallas", "Book a fl ight"])
def test_a_word_and_a_piece_are_not_joined_into_another_word(text):
    """`kar in` joined was the known `karin`, which hid the unknown object of `rent a kar`; a topic word cut in two
    next to a word (`fl ight`) is joined by the classifier (categories.join_pieces), not here."""
    assert norm(text) == text


@pytest.mark.parametrize("text", ["e.g. a flight", "U.S. Open tickets", "Plan A or B", "a 4 x 4 truck",
                                  "one-way to Denver", "Rooms for 2 adults", "pick a movie"])
def test_ordinary_text_is_not_joined(text):
    assert norm(text) == text


@pytest.mark.parametrize("text,expected", [
    ("h0t3l", "hotel"), ("fl1ght", "flight"), ("c4r", "car"), ("j0bs", "jobs"), ("m0v13", "movie"),
    ("hote1", "hotel"), ("4pply", "apply"), ("fl!ght", "flight"), ("ho+el", "hotel"), ("c@r", "car"),
    ("$hop", "shop"), ("(h0t3l)", "(hotel)"),
])
def test_leetspeak_is_decoded_to_known_words(text, expected):
    assert norm(text) == expected


@pytest.mark.parametrize("text", ["16GB", "3rd", "5pm", "UA123", "A380", "4x4", "covid19", "F-150", "$100",
                                  "me@example.com", "https://example.com/a?b=c", "www.example.com", "AT&T",
                                  "O'Hare", "Disney+", "24/7", "50%"])
def test_numbers_codes_and_addresses_are_left_alone(text):
    n = normalise(text, KNOWN)
    assert n.text == text and not n.residue


@pytest.mark.parametrize("text", ["tr7cks", "Qm9vayBhIGhvdGVs", "h0t3lz9", "ho\u2021el"])
def test_letters_broken_by_digits_or_symbols_that_spell_nothing_are_residue(text):
    assert normalise(text, KNOWN).residue == (text,)


def test_escapes_are_decoded():
    assert decode_escapes("h&#111;tel") == "hotel"
    assert norm("Book%20a%20hotel") == "Book a hotel"
    assert norm("Book%2520a%2520hotel") == "Book a hotel"   # two layers
    assert norm("50% off") == "50% off"


def test_run_on_words_are_segmented():
    assert norm("bookahotelinparis") == "book a hotel in paris"
    assert segment("zzzzqqqqxxxx", KNOWN) is None
    assert norm("Carvana") == "Carvana"   # shorter than a run worth splitting


@pytest.mark.parametrize("text,expected", [
    ("B o o k  a  h o t e l", "book a hotel"),            # spaced letters across words: joined, then split
    ("r e n t a c a r", "rent a car"), ("book_a_hotel_in_paris", "book a hotel in paris"),
    ("#bookhotel #paris", "#book hotel #paris"), ("#rentacar", "#rent a car")])
def test_words_glued_by_spacing_underscores_or_a_hashtag_are_read_apart(text, expected):
    assert norm(text) == expected


@pytest.mark.parametrize("text,expected", [("#1 pizza", "#1 pizza"), ("#paris", "#paris"), ("h o t e l", "hotel"),
                                           ("Carvana", "Carvana"), ("user_id and row_count", "user id and row count")])
def test_glue_that_hides_no_words_stays(text, expected):
    assert norm(text) == expected


@pytest.mark.parametrize("text", ["\u2803\u2815\u2815\u2805 a hotel", "\u6771\u4eac hotel", "\u0431 hotel", "\ue000 hotel",
                                  "\ufffd hotel", "hotel \x00", "\ud800 hotel", "\u0279\u01ddu\u0287"])
def test_unreadable_characters_are_reported_and_blanked(text):
    n = normalise(text, KNOWN)
    assert n.unreadable and all(readable(c) for c in n.text)


@pytest.mark.parametrize("text,expected", [
    ("\U0001F3E8 in Paris", "hotel in Paris"),                              # read, and reported (below)
    ("play it \u25b6\ufe0f pls \U0001F64F", "play it black right-pointing triangle pls person with folded hands"),
    ("\U0001F44D\U0001F3FD ok", "thumbs up sign ok"),                      # the skin tone is dropped
    ("\u2708\ufe0f ATL\u2192BOS", "airplane ATL \u2192 BOS"),           # an arrow is a word of its own
])
def test_pictographs_are_read_by_their_names_and_arrows_set_apart(text, expected):
    n = normalise(text, KNOWN)
    assert " ".join(n.text.split()) == expected and not n.unreadable and not n.residue


@pytest.mark.parametrize("text,objects", [("\U0001F3E8\U0001F6CF\ufe0f", "\U0001F3E8\U0001F6CF"),
                                          ("\U0001F697 pls \U0001F64F\U0001F525", "\U0001F697"),
                                          ("\u2708\ufe0f NYC", "\u2708"), ("\U0001F602\U0001F44D\u2705\u2b50", "")])
def test_pictographs_that_express_no_mood_are_reported(text, objects):
    """The classifier learnt no text written with 🏨 or 🚗: those are reported (it abstains); faces, hands, hearts,
    stars and checks are not."""
    assert normalise(text, KNOWN).pictographs == tuple(objects)


@pytest.mark.parametrize("text", ["Price \u20ac20 \u2192 \u00a330", "Caf\u00e9 \u00a9 2024",
                                  "\u201cquoted\u201d \u2014 ok"])
def test_punctuation_currency_and_common_symbols_are_readable(text):
    assert not normalise(text, KNOWN).unreadable


@pytest.mark.parametrize("text", [
    "Reserva una habitacion en Sevilla para dos noches", "Reserver un vol pour Lyon demain matin",
    "Ein Auto in Munchen fur das Wochenende mieten", "Cerca un lavoro come cameriere a Milano e candidati",
    "Zoek een film om vanavond te kijken", "Reserva Una Habitacion En Sevilla Para Dos Noches",
    "Cerca un lavoro come cameriere a Milano",
    "Ookbay an otelhay orfay otway ightsnay",   # no language: most words unknown
])
def test_other_languages_are_noticed(text):
    assert foreign_words(text, KNOWN)


@pytest.mark.parametrize("text", [
    "Find hotels with a pool in las vegas for 3 adults", "Compare airfares from Los Angeles to Honolulu",
    "Browse convertibles under 30,000 dollars on Carvana", "Book a table for two", "Rent SUV Denver Friday",
])
def test_english_is_not_taken_for_another_language(text):
    assert not foreign_words(text, KNOWN)


def test_nothing_is_guessed_without_a_lexicon():
    n = normalise("Book a f l i g h t h0t3l", frozenset())
    assert n.text == "Book aflight h0t3l" and n.residue == ("h0t3l",)


def test_normalised_text_is_nfkc_stable():
    text = norm("\uff21\u0301 \u2163 \u00bd \ufb01ght")
    assert unicodedata.normalize("NFKC", text) == text


@pytest.mark.parametrize("text,routes", [("bos\u2192den fri", ("bos\u2192den",)), ("SFO\u2192ORD\u2192LGA", ("SFO\u2192ORD\u2192LGA",)),
                                         ("lax \u2192 hnl", ()), ("x\u27f6y", ("x\u27f6y",))])
def test_words_joined_by_an_arrow_are_set_apart_and_reported(text, routes):
    n = normalise(text, KNOWN)
    assert n.routes == routes and "\u2192 " in n.text + " " or "\u27f6 " in n.text
