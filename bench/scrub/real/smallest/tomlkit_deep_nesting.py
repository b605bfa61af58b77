import tomlkit
try:
    tomlkit.parse('v = ' + '[' * 3000 + ']' * 3000)
except tomlkit.exceptions.ParseError:
    pass
