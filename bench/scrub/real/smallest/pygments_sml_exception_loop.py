from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import SMLLexer
highlight('exception', SMLLexer(), HtmlFormatter())
