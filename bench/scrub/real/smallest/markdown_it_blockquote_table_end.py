from markdown_it import MarkdownIt
MarkdownIt().enable('table').render('> | a |\n> | - |\n>')
