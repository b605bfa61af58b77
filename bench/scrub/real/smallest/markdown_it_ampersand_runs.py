from markdown_it import MarkdownIt
MarkdownIt().render('&' * 600000)
