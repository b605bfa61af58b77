from urllib.parse import urlparse
from markdown_it import MarkdownIt
url = MarkdownIt().render('[d](http://[::1]:8000/)').split('"')[1]
try:
    urlparse(url).port
    print('ok        ', url)
except ValueError:
    print('bad port  ', url)
