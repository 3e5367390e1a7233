"""A small synthetic language with semantic classes and Zipf frequencies.

Sentences come from grammar templates whose slots each take words of one
class, so words of a class share their contexts, and a next-token model
trained on the corpus places them near each other. Within a class, word
frequencies follow a Zipf law, so rare words exist. Everything is
deterministic given the seed. No Qt here.

The language also holds the classic examples by construction:

- people cross three attributes (gender, royal or common, grown-up or
  young), and words that agree with one attribute follow them ("the king
  said he ...", "the queen wore a crown", "the girl played ..."), so the
  offset man -> woman is the offset king -> queen: king - man + woman lands
  on queen;
- "bank" fills a slot of river sentences ("the otter sat on the bank by the
  river") and a slot of money sentences ("the bank held money for the
  baker"): one row for both senses;
- "the cat sat on the mat", and robot, arm, box and tool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "CLASSES", "FUNCTION_WORDS", "SPECIAL_TOKENS", "PEOPLE", "SHARED_WORDS", "Corpus", "make_corpus", "vocabulary",
    "choice_cdf", "pick",
]

CLASSES: dict[str, list[str]] = {
    "animal": (
        "cat dog horse cow sheep goat pig rabbit fox wolf bear deer mouse lion tiger owl "
        "duck goose frog snake otter badger camel zebra monkey panda koala eagle hedgehog"
    ).split(),
    "vehicle": (
        "car bus truck train bike boat ship plane tram van taxi tractor scooter rocket ferry "
        "canoe wagon jeep yacht sledge helicopter subway lorry"
    ).split(),
    "colour": (
        "red blue green yellow black white orange purple pink brown grey silver golden violet "
        "crimson amber teal beige maroon navy"
    ).split(),
    "number": (
        "one two three four five six seven eight nine ten eleven twelve twenty thirty forty "
        "fifty hundred thousand sixteen"
    ).split(),
    "place": (
        "park city village forest river market school garden beach harbour station farm "
        "mountain valley museum island desert bridge castle library airport hospital"
    ).split(),
    "food": (
        "bread apple cheese soup rice cake fish egg milk honey pear carrot banana cherry "
        "onion pasta butter grape lemon plum mango walnut"
    ).split(),
    "person": (
        "teacher doctor farmer pilot driver baker sailor student painter nurse singer "
        "builder chef judge poet miner clerk tailor dancer lawyer"
    ).split(),
    "verb": (
        "sees finds likes watches follows chases feeds visits hears paints draws helps "
        "meets calls carries pushes greets admires"
    ).split(),
    "adjective": (
        "big small old young quick slow happy quiet tall tiny brave clever sleepy noisy "
        "gentle proud lazy fierce shy"
    ).split(),
    "people": "king queen man woman prince princess boy girl".split(),
    "thing": "mat box tool rug cup lamp bag bowl bucket ladder".split(),
    "machine": "robot drone crane computer printer engine".split(),
    "part": "arm hand wheel claw leg sensor".split(),
    "water": "shore stream pond lake marsh creek brook pool".split(),
    "money": "vault wallet purse safe till coffer".split(),
}

#: (gender, rank, age) of each word of the "people" class
PEOPLE: dict[str, tuple[str, str, str]] = {
    "king": ("male", "royal", "grown"), "queen": ("female", "royal", "grown"),
    "man": ("male", "common", "grown"), "woman": ("female", "common", "grown"),
    "prince": ("male", "royal", "young"), "princess": ("female", "royal", "young"),
    "boy": ("male", "common", "young"), "girl": ("female", "common", "young"),
}
#: a word that agrees with one attribute of the last person named: {@he} -> "he" or "she"
AGREEMENT: dict[str, dict[str, str]] = {
    "he": {"male": "he", "female": "she"},
    "his": {"male": "his", "female": "her"},
    "ruled": {"royal": "ruled", "common": "served"},
    "crown": {"royal": "crown", "common": "cap"},
    "child": {"young": "child", "grown": "grownup"},
    "played": {"young": "played", "grown": "worked"},
}
#: words that fill slots of several classes (class of the word, {slot class: share of that slot})
SHARED_WORDS: dict[str, tuple[str, dict[str, float]]] = {
    "bank": ("place", {"water": 0.1, "money": 0.4}),
}

FUNCTION_WORDS = (
    "the a in to with and near of on is was at by from ate drove were bought . sat said he she his her "
    "ruled served wore crown cap child grownup played worked lifted its used swam wet kept coins held money "
    "for paid into"
).split()
SPECIAL_TOKENS = ["<pad>", "<unk>", "<bos>"]

# (weight, template); {class} is a slot filled from that class, {@word} agrees
# with the last person named ("of" appears in none: a row training never reaches)
TEMPLATES = [
    (6, "the {adjective} {animal} {verb} the {animal} in the {place} ."),
    (5, "the {person} drove the {colour} {vehicle} to the {place} ."),
    (4, "{number} {colour} {vehicle} were near the {place} ."),
    (5, "the {animal} ate the {food} at the {place} ."),
    (4, "a {person} {verb} a {adjective} {person} ."),
    (3, "the {person} bought {number} {food} from the {place} ."),
    (3, "a {colour} {vehicle} is by the {place} ."),
    (3, "the {food} was {colour} and {adjective} ."),
    (3, "{number} {animal} and {number} {animal} on the {vehicle} ."),
    (2, "the {adjective} {person} ate {food} with {food} ."),
    (2, "the {place} is {adjective} ."),
    (2, "a {adjective} {animal} {verb} {number} {food} ."),
    # people: each template probes one attribute right after the person
    (2, "the {people} said {@he} was {adjective} ."),
    (2, "the {people} and {@his} {animal} sat on the {thing} ."),
    (2, "the {people} {@ruled} the {place} ."),
    (2, "the {people} wore a {@crown} ."),
    (2, "the {people} was a {@child} ."),
    (2, "the {people} {@played} in the {place} ."),
    (2, "the {people} and the {people} sat on the {thing} ."),
    # the cat on the mat; the robot's arm, a box and a tool
    (3, "the {adjective} {animal} sat on the {thing} ."),
    (2, "the {machine} lifted the {thing} with its {part} ."),
    (1, "a {person} used the {machine} and a {thing} ."),
    (1, "its {part} was {colour} ."),
    # bank by the river, bank with money
    (2, "the {animal} sat on the {water} by the river ."),
    (2, "the {water} was wet near the {place} ."),
    (1, "{number} fish swam by the {water} ."),
    (2, "the {person} kept {number} coins in the {money} ."),
    (2, "the {money} held money for the {person} ."),
    (1, "the {person} paid money into the {money} ."),
]

ZIPF_EXPONENT = 1.1


def vocabulary() -> tuple[list[str], dict[str, str]]:
    """All word types in id order and the class of each content word.

    Returns
    -------
    words : list of str
        Special tokens first, then function words, then the classes in
        order, then the words shared by several slots (``SHARED_WORDS``).
    classes : dict str -> str
        word -> class name ("function" for function words).
    """
    words = list(SPECIAL_TOKENS) + list(FUNCTION_WORDS)
    classes = {w: "function" for w in FUNCTION_WORDS}
    for cls, ws in CLASSES.items():
        for w in ws:
            words.append(w)
            classes[w] = cls
    for w, (cls, _) in SHARED_WORDS.items():
        words.append(w)
        classes[w] = cls
    return words, classes


@dataclass
class Corpus:
    words: list[str]
    classes: dict[str, str]
    #: the corpus as one stream of token ids, sentences separated by <bos>
    ids: np.ndarray
    sentences: list[str]

    @property
    def vocab_size(self) -> int:
        return len(self.words)

    def counts(self) -> np.ndarray:
        """Occurrences of each id in the corpus, shape (V,) int64."""
        return np.bincount(self.ids, minlength=self.vocab_size)

    def class_labels(self) -> np.ndarray:
        """Class index of each id (-1 for special tokens), shape (V,)."""
        names = list(CLASSES) + ["function"]
        return np.array([names.index(self.classes[w]) if w in self.classes else -1 for w in self.words])


def choice_cdf(p: np.ndarray) -> np.ndarray:
    """The cumulative weights :func:`pick` looks a draw up in (as ``Generator.choice`` makes them)."""
    cdf = np.asarray(p, dtype=np.float64).cumsum()
    return cdf / cdf[-1]


def pick(rng: np.random.Generator, cdf: np.ndarray) -> int:
    """``rng.choice(len(p), p=p)``, the same index from the same stream, for ``cdf = choice_cdf(p)``.

    ``choice`` checks ``p`` at every call, and its checks let the GIL go and
    take it back: called 60,000 times in a row by a worker (a corpus), that
    kept the window's thread from the GIL for up to 0.25 s at a time (a
    thread that waits for the GIL is woken by each release and sleeps again
    when the GIL is retaken first). One uniform looked up in the cdf does
    not let it go, and is eight times faster.
    """
    return int(cdf.searchsorted(rng.random(), side="right"))


def make_corpus(n_sentences: int = 20000, seed: int = 0) -> Corpus:
    """Generate the corpus deterministically.

    Words within a class are drawn with probability proportional to
    1 / rank^1.1, the ranks shuffled by the seed, so each class has a few
    frequent words and a tail of rare ones. A shared word (``SHARED_WORDS``)
    takes its share of each slot it fills before the class's words.
    """
    rng = np.random.default_rng(seed)
    words, classes = vocabulary()
    index = {w: i for i, w in enumerate(words)}
    slots: dict[str, tuple[list[str], np.ndarray]] = {}
    for cls, ws in CLASSES.items():
        ranks = rng.permutation(len(ws)) + 1
        p = 1.0 / ranks.astype(np.float64) ** ZIPF_EXPONENT
        p /= p.sum()
        shared = [(w, shares[cls]) for w, (_, shares) in SHARED_WORDS.items() if cls in shares]
        share = sum(s for _, s in shared)
        p = np.concatenate([[s for _, s in shared], p * (1.0 - share)])
        slots[cls] = ([w for w, _ in shared] + ws, choice_cdf(p))
    weights = np.array([w for w, _ in TEMPLATES], dtype=np.float64)
    weights /= weights.sum()
    parsed = [t.split() for _, t in TEMPLATES]
    bos = index["<bos>"]
    ids: list[int] = []
    sentences: list[str] = []
    choice = rng.choice(len(TEMPLATES), size=n_sentences, p=weights)
    for t in choice:
        out: list[str] = []
        person = None
        for part in parsed[t]:
            if part.startswith("{@"):
                forms = AGREEMENT[part[2:-1]]
                out.append(next(forms[a] for a in PEOPLE[person] if a in forms))
            elif part.startswith("{"):
                ws, cdf = slots[part[1:-1]]
                out.append(ws[pick(rng, cdf)])
                if out[-1] in PEOPLE:
                    person = out[-1]
            else:
                out.append(part)
        sentences.append(" ".join(out))
        ids.append(bos)
        ids.extend(index[w] for w in out)
    return Corpus(words, classes, np.asarray(ids, dtype=np.int64), sentences)
