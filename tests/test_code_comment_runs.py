"""A comment kept whole in source code passed as text: a colon that ends a comment's line is no lead-in that parts the
comment, and a line that opens a bracket right under a comment stays with what it opens where the comment's glued
run is over a level's limit (bench/QUALITY.md, thirty-sixth session)."""

from logichunk import chunk

#: JavaScript: a comment run whose first line ends with a colon, over a call it does not fit with under 256
QUIRK = """const adduser = async (npm, opts) => {
  let res
  if (!res) {
    const username = await read.username('Username:', opts.username)
    const password = await read.password('Password:', opts.password)
    const email = await read.email('Email (this will be public):', opts.email)
    // registry quirk:
    // If you add an existing user with their current password, it is a login, and if that account has otp you are asked for it.
    res = await otplease(npm, opts, (reqOpts) => adduserCouch(username, email, password, { ...reqOpts, scope }))
  }
  return res
}

module.exports = adduser
"""

#: Python: a comment over a line that opens a dict, the three over half the maximum (100 of 200) together
TABLE = '''def _formatter(data, sign, legacy):
    """Pick a formatter for the data's kind."""
    # wrapped in lambdas to avoid taking a code path
    # with the wrong type of data
    table = {
        'bool': lambda: BoolFormat(data),
        'int': lambda: IntegerFormat(data, sign),
        'float': lambda: FloatingFormat(data, sign, legacy=legacy),
        'complex': lambda: ComplexFormat(data, sign, legacy=legacy),
    }
    return table
'''


def spans(text, m):
    return {(c.span.start, c.span.end) for c in chunk(text, max_size=m)}


def test_a_colon_inside_a_comment_run_does_not_part_it():
    start = QUIRK.index("    // registry")
    end = QUIRK.index("    res = await")
    got = spans(QUIRK, 512)
    # (the run, 152 characters, opens the second level's chunk that holds it and its call, 269: glued to its code
    # below level 1, as a heading is; the base cut after "// registry quirk:" there, the colon's weak bond)
    assert any(a == start and b >= end for a, b in got)
    inner = QUIRK.index("    // If you")
    assert not any(a < start and b == inner for a, b in got)


def test_a_line_that_opens_a_bracket_stays_with_what_it_opens():
    # (under 100 the comment and "table = {" together are 101: the line goes with its items, the comment alone; where
    # the two fit together, under 102 at max 512, the line's bond to its items is the one the limit breaks, as it is
    # for "if (x) {" under its comment)
    for a, b in spans(TABLE, 200):
        body = TABLE[a:b].rstrip()
        assert b == len(TABLE) or not body.endswith("{"), body
