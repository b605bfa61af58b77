from urllib3.util import parse_url
from urllib3.exceptions import LocationParseError
try:
    parse_url('http://' + 'a@' * 40000 + 'b:c')
except LocationParseError:
    pass
