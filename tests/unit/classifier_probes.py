"""What the classifier red-team tests share: the shipped bank and whether a probe gets through."""
from veriguard.enforce.categories import CategoryClassifier

from tests.conftest import SPECS

BANK = SPECS / "mind2web_sc" / "categories.toml"


def allowed(clf: CategoryClassifier, gold: str, text: str) -> bool:
    """Whether a user who qualifies for nothing in `gold` would be let through (`gold` neither found nor uncertain)."""
    c = clf.classify(text)
    return gold not in c.labels | c.uncertain
