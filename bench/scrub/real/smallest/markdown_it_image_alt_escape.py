from markdown_it import MarkdownIt
assert 'alt="a * b"' in MarkdownIt().render('![a \\* b](/u)'), 'scrub: wrong result still present'
