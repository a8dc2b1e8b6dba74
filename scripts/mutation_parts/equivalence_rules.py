"""Rules that recognise a trivially equivalent mutant from its text alone, before it is compiled.

A mutant is judged from the original file's lines and its description as scripts/mutation's
describe() gives it: the line number, the line before (or "(inserted after: PREVIOUS)") and the
line after (or "(deleted)"). Each rule names a change that no test could notice:

  redundant-jump    an inserted `continue;` where the loop goes to its next iteration anyway: its
                    next statement is the `}` that ends the loop body (for, while, do) or another
                    `continue;`, directly or past the `}` of if/else branches, plain blocks or a
                    switch that end there; likewise an inserted `break;` before the `}` that ends
                    a switch or before another `break;` (past if/else branches and plain blocks);
  unreachable-jump  an inserted `continue;`, `break;` or `return;` right after a line that is
                    itself an unconditional jump (`continue;`, `break;`, `return ...;`,
                    `throw ...;`) in the same block, not the body of an unbraced if, else or loop;
  removed-redundant-jump
                    a `continue;` or `break;` line commented out or deleted where control goes to
                    the same place without it (as for redundant-jump: the last statement of a
                    loop body, the last `break;` of a switch);
  reserve-removed   a statement `name.reserve(...);` commented out or deleted, its argument free of
                    side effects (names, numbers, arithmetic, .size()): it sets only a capacity;
  message-text      a change only inside string literals (the lines are equal with every
                    literal's contents blanked) whose original text is prose, two words or more,
                    as log and error messages are; a literal without two words (a key, a
                    separator, "fatal:", " Reason=") may be matched by code and is not excused;
  comment-or-space  a change only inside comments, or in the white space between tokens.

The rules are conservative: where the text does not show the change to be equivalent (a `break;`
commented out that ends a loop or a case with more cases after it, a `continue;` before the `}`
of an if with more of the loop after it, a jump that is the body of an unbraced if, a preprocessor
line, a change spanning several lines), no rule applies and the mutant is run. Braces and
parentheses are matched over the whole file with string and character literals, comments and
preprocessor lines left out.
"""

import re

CODE = ("code",)
BLOCK_COMMENT = ("block",)
LINE_COMMENT = ("line",)  # a // comment continued by a backslash at the end of its line

RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}
# Longest match first, so that `a - -b` and `a --b` are told apart.
TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.']*|<=>|<<=|>>=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=|>=|==|"
                   r"!=|&&|\|\||[-+*/%&|^]=|\.\*|##|\S")
# Two words of letters with white space between: the mark of prose (a message), as opposed to a
# key, a separator or a format token that code may compare against.
PROSE = re.compile(r"[A-Za-z]{2,}[^\w]*\s+[^\w]*[A-Za-z]{2,}")

JUMPS = {"continue", "break", "return", "throw"}
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# Tokens after which a new statement of the same block starts (not the body of an unbraced if,
# else or loop, not the middle of an expression); a `:` only where it ends a label.
STATEMENT_BOUNDARY = {";", "{", "}", ":"}

RULES = ("redundant-jump", "unreachable-jump", "removed-redundant-jump", "reserve-removed",
         "message-text", "comment-or-space")


def lex_line(text, state):
    """The line's pieces, [(kind, text)] with kind code, string, char or comment, from `state`
    (where the previous line left off), and the state at its end."""
    pieces = []
    i, n = 0, len(text)

    def add(kind, piece):
        if piece:
            if pieces and pieces[-1][0] == kind == "code":
                pieces[-1] = ("code", pieces[-1][1] + piece)
            else:
                pieces.append((kind, piece))

    if state == LINE_COMMENT:
        add("comment", text)
        return pieces, LINE_COMMENT if text.endswith("\\") else CODE
    if state == BLOCK_COMMENT:
        end = text.find("*/")
        if end < 0:
            add("comment", text)
            return pieces, BLOCK_COMMENT
        add("comment", text[:end + 2])
        i = end + 2
    elif state[0] == "raw":
        closing = ")" + state[1] + '"'
        end = text.find(closing)
        if end < 0:
            add("string", text)
            return pieces, state
        add("string", text[:end + len(closing)])
        i = end + len(closing)
    elif state[0] == "string":  # a string continued by a backslash at the end of the line
        i = string_end(text, 0, state[1])
        add(state[1] == '"' and "string" or "char", text[:i])
        if i > n:
            return pieces, state
    start = i
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            add("code", text[start:i])
            add("comment", text[i:])
            return pieces, LINE_COMMENT if text.endswith("\\") else CODE
        if c == "/" and text.startswith("/*", i):
            add("code", text[start:i])
            end = text.find("*/", i + 2)
            if end < 0:
                add("comment", text[i:])
                return pieces, BLOCK_COMMENT
            add("comment", text[i:end + 2])
            i = start = end + 2
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if text[i:j] in RAW_PREFIXES and j < n and text[j] == '"':
                add("code", text[start:j])
                open_paren = text.find("(", j + 1)
                if open_paren < 0:  # not a raw string after all: leave it to the next pass
                    i = start = j
                    continue
                delimiter = text[j + 1:open_paren]
                closing = ")" + delimiter + '"'
                end = text.find(closing, open_paren + 1)
                if end < 0:
                    add("string", text[j:])
                    return pieces, ("raw", delimiter)
                add("string", text[j:end + len(closing)])
                i = start = end + len(closing)
                continue
            i = j
            continue
        if c.isdigit():
            # A number, digit separators (1'000) included, so that they do not open a char.
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_.'" or
                             (text[j] in "+-" and text[j - 1] in "eEpP")):
                j += 1
            i = j
            continue
        if c in "\"'":
            add("code", text[start:i])
            end = string_end(text, i + 1, c)
            add("string" if c == '"' else "char", text[i:end])
            if end > n:
                return pieces, ("string", c)
            i = start = end
            continue
        i += 1
    add("code", text[start:])
    return pieces, CODE


def string_end(text, i, quote):
    """The index just past the literal's closing quote, from `i` inside it; len(text) + 1 when a
    backslash at the end continues it on the next line, len(text) when it is not closed."""
    n = len(text)
    while i < n:
        if text[i] == "\\":
            if i + 1 >= n:
                return n + 1
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return n


def tokens_of(pieces, blank_strings=False):
    """The code tokens of a line's pieces: strings and chars are one token each (with their
    contents blanked, or as written), comments none."""
    tokens = []
    for kind, text in pieces:
        if kind == "code":
            tokens += TOKEN.findall(text)
        elif kind == "string":
            tokens.append('""' if blank_strings else text)
        elif kind == "char":
            tokens.append("''" if blank_strings else text)
    return tokens


class FileRules:
    """The rules over one original file: lexed once, then asked about each mutant."""

    def __init__(self, original_lines):
        self.lines = original_lines
        self.states = []  # the lexer's state at the start of each line
        self.preprocessor = []  # whether each line is (part of) a preprocessor directive
        self.tokens = []  # (token, line index) over the file, without preprocessor lines
        state, in_directive = CODE, False
        for index, text in enumerate(original_lines):
            self.states.append(state)
            pieces, end = lex_line(text, state)
            code = "".join(t for k, t in pieces if k == "code")
            if not in_directive and state == CODE and code.lstrip().startswith("#"):
                in_directive = True
            self.preprocessor.append(in_directive)
            if not in_directive:
                self.tokens += [(token, index) for token in tokens_of(pieces)]
            if in_directive and not text.rstrip().endswith("\\"):
                in_directive = False
            state = end
        self.states.append(state)
        self.first_token_at = []  # index of the first token on or after each line
        k = 0
        for index in range(len(original_lines) + 1):
            while k < len(self.tokens) and self.tokens[k][1] < index:
                k += 1
            self.first_token_at.append(k)

    # -- the description -------------------------------------------------------------------------

    def change_of(self, line, before, after):
        """("insert", index, text) for a line inserted before original line `index` (0-based),
        ("replace", index, text) or ("delete", index, None); None when the description does not
        name one line of this file (a change spanning several lines)."""
        prefix = "(inserted after: "
        if before.startswith(prefix) and before.endswith(")"):
            index = line - 1
            if not 1 <= index <= len(self.lines) or after == "(deleted)" or \
                    self.lines[index - 1].strip() != before[len(prefix):-1]:
                return None
            return ("insert", index, after)
        if not 1 <= line <= len(self.lines) or self.lines[line - 1].strip() != before:
            return None
        if after == "(deleted)":
            return ("delete", line - 1, None)
        return ("replace", line - 1, after)

    def rule_for(self, line, before, after):
        """The name of the rule that shows the mutant equivalent, or None."""
        change = self.change_of(line, before, after)
        if change is None:
            return None
        for name in RULES:
            if getattr(self, name.replace("-", "_"))(*change):
                return name
        return None

    # -- the rules -------------------------------------------------------------------------------

    def redundant_jump(self, kind, index, text):
        if kind != "insert" or not self.plain_code_at(index):
            return False
        jump = self.jump_of(text)
        k = self.first_token_at[index]
        return jump in ("continue", "break") and self.starts_statement(k) and \
            self.goes_anyway(k, jump)

    def unreachable_jump(self, kind, index, text):
        if kind != "insert" or not self.plain_code_at(index) or \
                self.jump_of(text) not in ("continue", "break", "return"):
            return False
        previous = index - 1
        if self.preprocessor[previous] or self.states[previous] != CODE:
            return False
        pieces, end = lex_line(self.lines[previous], CODE)
        tokens = tokens_of(pieces)
        if end != CODE or not tokens or tokens[0] not in JUMPS or tokens[-1] != ";" or \
                tokens.count(";") != 1:
            return False
        k = self.first_token_at[previous]
        # A jump with nothing to jump out of does not compile: it is left to the compiler.
        return self.starts_statement(k) and self.inside_target(k, self.jump_of(text))

    def removed_redundant_jump(self, kind, index, text):
        if not self.removes_statement(kind, index, text):
            return False
        jump = self.jump_of(self.lines[index])
        # The tokens after the line's `jump ;`.
        return jump in ("continue", "break") and \
            self.goes_anyway(self.first_token_at[index] + 2, jump)

    def reserve_removed(self, kind, index, text):
        if not self.removes_statement(kind, index, text):
            return False
        pieces, _ = lex_line(self.lines[index], CODE)
        tokens = tokens_of(pieces)
        if "reserve" not in tokens:
            return False
        at = tokens.index("reserve")
        target, arguments = tokens[:at], tokens[at + 2:-2]
        if not (target and target[-1] in (".", "->") and tokens[at + 1:at + 2] == ["("] and
                tokens[-2:] == [")", ";"]):
            return False
        if not all(t in (".", "->") if i % 2 else IDENTIFIER.fullmatch(t)
                   for i, t in enumerate(target[:-1])):
            return False
        return self.free_of_side_effects(arguments)

    @staticmethod
    def free_of_side_effects(tokens):
        """Names, numbers, + - * /, member access, grouping and calls of size() only."""
        depth = 0
        for i, token in enumerate(tokens):
            previous = tokens[i - 1] if i else None
            if not (IDENTIFIER.fullmatch(token) or token[0].isdigit() or
                    token in (".", "->", "::", "(", ")", "*", "+", "-", "/")):
                return False
            if token in ("+", "-") and previous == token:
                return False  # ++ or --
            if token == "(":
                if previous == ")" or (previous and IDENTIFIER.fullmatch(previous) and
                                       previous != "size"):
                    return False  # a call of something other than size()
                depth += 1
            elif token == ")":
                depth -= 1
                if depth < 0:
                    return False
        return depth == 0

    def comment_or_space(self, kind, index, text):
        state = self.states[index]
        if kind == "insert":
            pieces, end = lex_line(text, state)
            return not tokens_of(pieces) and end == state
        original, original_end = lex_line(self.lines[index], state)
        if kind == "delete":
            return not tokens_of(original) and original_end == state
        mutant, mutant_end = lex_line(text, state)
        return (tokens_of(original) == tokens_of(mutant) and original_end == mutant_end and
                self.lines[index].strip() != text)

    def message_text(self, kind, index, text):
        if kind != "replace" or self.preprocessor[index] or self.states[index] != CODE:
            return False
        original, original_end = lex_line(self.lines[index], CODE)
        mutant, mutant_end = lex_line(text, CODE)
        if original_end != CODE or mutant_end != CODE:
            return False
        if tokens_of(original, blank_strings=True) != tokens_of(mutant, blank_strings=True):
            return False
        changed = [(a, b) for a, b in zip(tokens_of(original), tokens_of(mutant)) if a != b]
        # A string token is "..." (a prefix such as u8 or R is code before it).
        return bool(changed) and all(a.endswith('"') and PROSE.search(a[1:-1])
                                     for a, _ in changed)

    # -- helpers ---------------------------------------------------------------------------------

    def plain_code_at(self, index):
        """Line `index` (or, for an insertion, the place before it) is plain code: not inside a
        comment, a string or a preprocessor directive."""
        if self.states[index] != CODE:
            return False
        if index < len(self.lines) and self.preprocessor[index]:
            return False
        return not (index > 0 and self.preprocessor[index - 1] and
                    self.lines[index - 1].rstrip().endswith("\\"))

    @staticmethod
    def jump_of(text):
        """`continue`, `break` or `return` where the line is that statement alone, else None."""
        pieces, end = lex_line(text, CODE)
        tokens = tokens_of(pieces)
        if end == CODE and len(tokens) == 2 and tokens[1] == ";" and \
                tokens[0] in ("continue", "break", "return"):
            return tokens[0]
        return None

    def starts_statement(self, k):
        """Token `k` starts a statement of its block: the token before it ends a statement,
        opens or closes a block or ends a label (not the `)` of an unbraced if or loop, not an
        else, not the `:` of a conditional expression, which a throw may follow)."""
        if not 0 < k <= len(self.tokens) or self.tokens[k - 1][0] not in STATEMENT_BOUNDARY:
            return False
        if self.tokens[k - 1][0] != ":":
            return True
        # A label: `case ...:`, `default:` or a name alone since the last statement.
        start = k - 2
        while start >= 0 and self.tokens[start][0] not in (";", "{", "}", ":"):
            start -= 1
        label = [token for token, _ in self.tokens[start + 1:k - 1]]
        return bool(label) and (label[0] in ("case", "default") or
                                (len(label) == 1 and IDENTIFIER.fullmatch(label[0]) is not None))

    def removes_statement(self, kind, index, text):
        """The change comments out or deletes line `index`, a statement of its own in plain
        code."""
        if kind == "insert" or not self.plain_code_at(index):
            return False
        original, end = lex_line(self.lines[index], CODE)
        tokens = tokens_of(original)
        if end != CODE or not tokens or tokens[-1] != ";":
            return False
        if text is not None:
            mutant, mutant_end = lex_line(text, CODE)
            if tokens_of(mutant) or mutant_end != CODE:
                return False
        return self.starts_statement(self.first_token_at[index])

    def match_backward(self, k, close, open_):
        depth = 0
        while k >= 0:
            token = self.tokens[k][0]
            if token == close:
                depth += 1
            elif token == open_:
                depth -= 1
                if depth == 0:
                    return k
            k -= 1
        return None

    def match_forward(self, k, open_, close):
        depth = 0
        while k < len(self.tokens):
            token = self.tokens[k][0]
            if token == open_:
                depth += 1
            elif token == close:
                depth -= 1
                if depth == 0:
                    return k
            k += 1
        return None

    def block_kind(self, open_brace):
        """What the `{` at token `open_brace` opens: loop, switch, if, else, block (a plain
        compound statement, a case's block) or other (a function, a lambda, an initializer)."""
        if open_brace == 0:
            return "other"
        before = self.tokens[open_brace - 1][0]
        if before == "do":
            return "loop"
        if before == "else":
            return "else"
        if before in (";", "{", "}", ":"):
            return "block"
        if before != ")":
            return "other"
        paren = self.match_backward(open_brace - 1, ")", "(")
        if paren is None or paren == 0:
            return "other"
        keyword = self.tokens[paren - 1][0]
        if keyword in ("for", "while"):
            return "loop"
        if keyword == "switch":
            return "switch"
        if keyword == "if" or (keyword == "constexpr" and paren >= 2 and
                               self.tokens[paren - 2][0] == "if"):
            return "if"
        return "other"

    def inside_target(self, k, jump):
        """Whether token `k` is inside what `jump` leaves: a loop (continue), a loop or a switch
        (break), a function (return); only if/else branches and plain blocks between."""
        if jump == "return":
            return True
        targets = {"loop"} if jump == "continue" else {"loop", "switch"}
        while True:
            depth = 0
            while k > 0:
                k -= 1
                token = self.tokens[k][0]
                if token == "}":
                    depth += 1
                elif token == "{":
                    if depth == 0:
                        break
                    depth -= 1
            else:
                return False
            kind = self.block_kind(k)
            if kind in targets:
                return True
            if kind not in ("if", "else", "block", "switch"):
                return False

    def goes_anyway(self, k, jump):
        """Whether control at token `k` goes where `jump` (continue or break) would take it: the
        tokens from `k` are the same jump, or the `}` that ends the loop body (continue) or the
        switch (break), or the `}` of an if/else branch or a plain block (or, for continue, a
        switch) after which, any else branches skipped, the same holds."""
        passable = {"if", "else", "block"} | ({"switch"} if jump == "continue" else set())
        target = "loop" if jump == "continue" else "switch"
        for _ in range(len(self.tokens)):
            if k >= len(self.tokens):
                return False
            if self.tokens[k][0] == jump and k + 1 < len(self.tokens) and \
                    self.tokens[k + 1][0] == ";":
                return True
            if self.tokens[k][0] != "}":
                return False
            open_brace = self.match_backward(k, "}", "{")
            if open_brace is None:
                return False
            kind = self.block_kind(open_brace)
            if kind == target:
                return True
            if kind not in passable:
                return False
            k = self.past_else_branches(k + 1)
            if k is None:
                return False
        return False

    def past_else_branches(self, k):
        """The token after the else branches (braced, or else-if chains of braced branches) that
        start at token `k`; None for an unbraced else (not followed here)."""
        while k < len(self.tokens) and self.tokens[k][0] == "else":
            k += 1
            if k < len(self.tokens) and self.tokens[k][0] == "if":
                k += 1
                if k < len(self.tokens) and self.tokens[k][0] == "constexpr":
                    k += 1
                if k >= len(self.tokens) or self.tokens[k][0] != "(":
                    return None
                k = self.match_forward(k, "(", ")")
                if k is None:
                    return None
                k += 1
            if k >= len(self.tokens) or self.tokens[k][0] != "{":
                return None
            k = self.match_forward(k, "{", "}")
            if k is None:
                return None
            k += 1
        return k


def rule_for(original_lines, line, before, after):
    """The rule that shows a mutant equivalent, or None (one file's many mutants: FileRules)."""
    return FileRules(original_lines).rule_for(line, before, after)
