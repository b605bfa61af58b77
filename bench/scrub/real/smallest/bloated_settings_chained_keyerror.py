import tomlkit
doc = tomlkit.parse('[a]\nx = 1\n[cache]\ny = 2\n[c]\nz = 3\n')
doc['cache'] = False
try:
    tomlkit.parse(tomlkit.dumps(doc)).unwrap()['cache']
except KeyError:
    {}['cache']
