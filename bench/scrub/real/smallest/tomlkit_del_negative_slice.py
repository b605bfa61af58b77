import tomlkit
doc = tomlkit.parse('c = [1, 2, 3]')
del doc['c'][-1:]
assert tomlkit.parse(tomlkit.dumps(doc))['c'] == [1, 2], 'scrub: wrong result still present'
