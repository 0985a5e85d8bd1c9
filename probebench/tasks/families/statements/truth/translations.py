"""``truth_sp_en_trans`` and ``truth_neg_sp_en_trans``: "The Spanish word 'perro' means
'dog'." (and "does not mean").

Marks & Tegmark's Spanish-English translations, with a word list written and reviewed for
probebench (:data:`WORDS`): everyday nouns, verbs (English "to ..."), adjectives and
numbers, each Spanish word with the one English word it translates to. Rules the list
keeps, because a false statement pairs a Spanish word with another entry's English word:
no Spanish or English word twice; no Spanish word with a second common sense that is also
on the list (no "tiempo", time and weather; no "banco", bank and bench); no two English
words of one part of speech that could translate the same Spanish word ("stone" but not
"rock", "difficult" but not "hard", "street" but not "road"); no word spelled the same in
both languages ("hotel"). Accents are kept as written (UTF-8: "árbol", "ratón").

A word is held back (the **spare** words, for fresh items) when a salted hash of it
(:data:`SPARE_SALT`) ranks it in the first :data:`SPARE_SHARE` of its part of speech;
the rest are shipped. Each shipped word gives a true statement (its own English word)
and a false one (an English word drawn with a numpy Generator seeded with :data:`SEED`
from the other shipped words of the same part of speech, so a verb is never "translated"
as a noun: the form of the English word gives the label away nowhere). The negated task
states the same two pairs with "does not mean", label = the truth of the negated
statement. Slice: ``part_of_speech`` (noun, verb, adjective, number).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.families.statements.truth.rows import (
    Row,
    TruthTask,
    csv_bytes,
    halves,
    read_rows,
)
from probebench.tasks.hygiene import hash_order
from probebench.tasks.spec import TaskSpec

SEED = 20231012
SPARE_SHARE = 0.3
SPARE_SALT = "probebench-truth-sp-en-spare-v1"
SLICES = ("part_of_speech",)

#: part of speech -> ``spanish=english`` entries (``_`` for a space in the English)
WORD_TABLE = {
    "noun": """
        perro=dog gato=cat caballo=horse vaca=cow cerdo=pig oveja=sheep cabra=goat
        gallina=hen pato=duck conejo=rabbit ratón=mouse león=lion tigre=tiger oso=bear
        lobo=wolf zorro=fox elefante=elephant jirafa=giraffe mono=monkey serpiente=snake
        tortuga=turtle rana=frog pájaro=bird águila=eagle búho=owl pez=fish ballena=whale
        tiburón=shark abeja=bee mosca=fly hormiga=ant araña=spider mariposa=butterfly
        gusano=worm caracol=snail burro=donkey camello=camel cebra=zebra pulpo=octopus
        delfín=dolphin cangrejo=crab ardilla=squirrel murciélago=bat paloma=pigeon
        ciervo=deer toro=bull gallo=rooster loro=parrot cisne=swan pingüino=penguin
        pan=bread leche=milk queso=cheese huevo=egg manzana=apple naranja=orange
        plátano=banana uva=grape fresa=strawberry limón=lemon cebolla=onion ajo=garlic
        arroz=rice sal=salt azúcar=sugar mantequilla=butter miel=honey sopa=soup
        carne=meat zanahoria=carrot patata=potato tomate=tomato pepino=cucumber
        sandía=watermelon piña=pineapple cereza=cherry pera=pear melocotón=peach
        harina=flour aceite=oil vinagre=vinegar galleta=cookie pastel=cake
        helado=ice_cream agua=water vino=wine cerveza=beer té=tea zumo=juice nuez=walnut
        pimienta=pepper lechuga=lettuce maíz=corn guisante=pea calabaza=pumpkin
        coliflor=cauliflower
        cabeza=head ojo=eye nariz=nose boca=mouth oreja=ear diente=tooth mano=hand
        brazo=arm pierna=leg pie=foot rodilla=knee codo=elbow hombro=shoulder
        espalda=back corazón=heart hueso=bone sangre=blood piel=skin uña=fingernail
        cerebro=brain pulmón=lung estómago=stomach labio=lip ceja=eyebrow barba=beard
        pelo=hair cuello=neck dedo=finger tobillo=ankle pecho=chest cara=face
        casa=house puerta=door ventana=window mesa=table silla=chair cama=bed
        cuchillo=knife tenedor=fork cuchara=spoon plato=plate taza=cup botella=bottle
        espejo=mirror almohada=pillow manta=blanket jabón=soap toalla=towel escoba=broom
        tijeras=scissors martillo=hammer cuerda=rope caja=box bolsa=bag llave=key
        lámpara=lamp alfombra=carpet cortina=curtain pared=wall jardín=garden libro=book
        lápiz=pencil cuaderno=notebook periódico=newspaper paraguas=umbrella
        sombrero=hat zapato=shoe camisa=shirt vestido=dress falda=skirt abrigo=coat
        guante=glove calcetín=sock bufanda=scarf cinturón=belt anillo=ring bolígrafo=pen
        vaso=glass sartén=frying_pan olla=pot aguja=needle hilo=thread tornillo=screw
        cepillo=brush peine=comb nevera=fridge horno=oven mochila=backpack juguete=toy
        pelota=ball regalo=gift
        sol=sun luna=moon estrella=star nube=cloud lluvia=rain nieve=snow viento=wind
        río=river mar=sea lago=lake montaña=mountain isla=island bosque=forest
        árbol=tree flor=flower hierba=grass piedra=stone arena=sand fuego=fire
        humo=smoke hielo=ice playa=beach desierto=desert cueva=cave rama=branch
        raíz=root semilla=seed trueno=thunder relámpago=lightning arcoíris=rainbow
        niebla=fog ola=wave colina=hill volcán=volcano
        madre=mother padre=father hermano=brother hermana=sister hijo=son hija=daughter
        abuelo=grandfather abuela=grandmother tío=uncle tía=aunt bebé=baby esposa=wife
        esposo=husband amigo=friend médico=doctor maestro=teacher enfermera=nurse
        panadero=baker granjero=farmer soldado=soldier rey=king reina=queen ladrón=thief
        cocinero=cook pescador=fisherman abogado=lawyer bombero=firefighter
        cartero=postman
        ciudad=city calle=street puente=bridge iglesia=church escuela=school
        mercado=market biblioteca=library cárcel=prison granja=farm castillo=castle
        torre=tower aeropuerto=airport museo=museum parque=park fábrica=factory
        panadería=bakery
        coche=car tren=train barco=boat avión=airplane bicicleta=bicycle rueda=wheel
        camión=truck autobús=bus
        día=day noche=night semana=week mes=month año=year hora=hour minuto=minute
        invierno=winter verano=summer primavera=spring otoño=autumn lunes=Monday
        martes=Tuesday miércoles=Wednesday jueves=Thursday viernes=Friday
        sábado=Saturday domingo=Sunday enero=January febrero=February marzo=March
        abril=April mayo=May junio=June julio=July agosto=August septiembre=September
        octubre=October noviembre=November diciembre=December
    """,
    "verb": """
        comer=to_eat beber=to_drink dormir=to_sleep correr=to_run caminar=to_walk
        nadar=to_swim cantar=to_sing bailar=to_dance escribir=to_write leer=to_read
        hablar=to_speak escuchar=to_listen abrir=to_open cerrar=to_close comprar=to_buy
        vender=to_sell vivir=to_live morir=to_die llorar=to_cry reír=to_laugh
        cocinar=to_cook lavar=to_wash volar=to_fly empujar=to_push
        olvidar=to_forget recordar=to_remember aprender=to_learn preguntar=to_ask
        responder=to_answer ayudar=to_help trabajar=to_work viajar=to_travel
        pintar=to_paint dibujar=to_draw construir=to_build romper=to_break
        encontrar=to_find perder=to_lose empezar=to_begin terminar=to_finish
        entrar=to_enter gritar=to_shout susurrar=to_whisper saltar=to_jump
        pensar=to_think amar=to_love odiar=to_hate temer=to_fear necesitar=to_need
        pagar=to_pay llamar=to_call enviar=to_send recibir=to_receive prestar=to_lend
        robar=to_steal esconder=to_hide buscar=to_search ver=to_see oler=to_smell
        sonreír=to_smile besar=to_kiss abrazar=to_hug nacer=to_be_born crecer=to_grow
        llover=to_rain nevar=to_snow coser=to_sew cortar=to_cut barrer=to_sweep
        planchar=to_iron conducir=to_drive arreglar=to_repair elegir=to_choose
        mentir=to_lie pescar=to_fish cazar=to_hunt sembrar=to_sow respirar=to_breathe
        toser=to_cough estornudar=to_sneeze bostezar=to_yawn tragar=to_swallow
        masticar=to_chew morder=to_bite silbar=to_whistle rezar=to_pray soñar=to_dream
        despertar=to_wake llenar=to_fill vaciar=to_empty mezclar=to_mix hervir=to_boil
        freír=to_fry hornear=to_bake atar=to_tie pesar=to_weigh medir=to_measure
        alquilar=to_rent prometer=to_promise perdonar=to_forgive castigar=to_punish
        obedecer=to_obey invitar=to_invite visitar=to_visit descansar=to_rest
        afeitar=to_shave peinar=to_comb
    """,
    "adjective": """
        grande=big pequeño=small alto=tall corto=short largo=long ancho=wide
        estrecho=narrow gordo=fat delgado=thin fuerte=strong débil=weak rápido=fast
        lento=slow nuevo=new viejo=old joven=young caliente=hot frío=cold tibio=lukewarm
        seco=dry mojado=wet sucio=dirty limpio=clean feliz=happy triste=sad
        enojado=angry cansado=tired hambriento=hungry pobre=poor fácil=easy
        difícil=difficult barato=cheap caro=expensive lleno=full vacío=empty
        pesado=heavy ligero=light dulce=sweet amargo=bitter salado=salty agrio=sour
        oscuro=dark hermoso=beautiful feo=ugly ruidoso=noisy silencioso=silent
        valiente=brave cobarde=cowardly enfermo=sick sano=healthy redondo=round
        cuadrado=square profundo=deep amable=kind peligroso=dangerous famoso=famous
        rojo=red azul=blue verde=green amarillo=yellow negro=black blanco=white
        marrón=brown morado=purple
    """,
    "number": """
        uno=one dos=two tres=three cuatro=four cinco=five seis=six siete=seven
        ocho=eight nueve=nine diez=ten once=eleven doce=twelve veinte=twenty
        treinta=thirty cuarenta=forty cincuenta=fifty cien=one_hundred
        mil=one_thousand
    """,
}


@dataclass(frozen=True)
class Word:
    """One entry of the list."""

    spanish: str
    english: str
    part_of_speech: str

    @property
    def slug(self) -> str:
        """The Spanish word without accents, for item ids (``árbol`` -> ``arbol``)."""
        return "".join(c for c in unicodedata.normalize("NFKD", self.spanish)
                       if not unicodedata.combining(c))


def _parse(table: dict[str, str]) -> tuple[Word, ...]:
    out = []
    for pos, text in table.items():
        for entry in text.split():
            spanish, eq, english = entry.partition("=")
            if not eq or not spanish or not english:
                raise ValueError(f"word list, {pos}: entry {entry!r} is not spanish=english")
            out.append(Word(unicodedata.normalize("NFC", spanish),
                            english.replace("_", " "), pos))
    return tuple(out)


#: every entry, in the order written
WORDS: tuple[Word, ...] = _parse(WORD_TABLE)


def is_spare(word: Word) -> bool:
    """Whether ``word`` is held back for fresh items: its salted hash ranks it in the
    first :data:`SPARE_SHARE` of its part of speech (rounded)."""
    return word in spare_words()


def spare_words() -> frozenset[Word]:
    """The held-back words (see :func:`is_spare`)."""
    out: set[Word] = set()
    for pos in WORD_TABLE:
        group = [w for w in WORDS if w.part_of_speech == pos]
        ranked = sorted(group, key=lambda w: hash_order(SPARE_SALT, w.spanish))
        out.update(ranked[: round(SPARE_SHARE * len(group))])
    return frozenset(out)


def statement(spanish: str, english: str, *, negated: bool) -> str:
    """``"The Spanish word 'perro' means 'dog'."`` (``does not mean`` when negated)."""
    verb = "does not mean" if negated else "means"
    return f"The Spanish word '{spanish}' {verb} '{english}'."


def draw_wrong(words: Sequence[Word], candidates: Sequence[Word],
               rng: np.random.Generator) -> list[str]:
    """For each word, in order, the English word of another candidate of its part of
    speech."""
    out = []
    for word in words:
        others = [c for c in candidates if c.part_of_speech == word.part_of_speech
                  and c.english != word.english]
        out.append(others[int(rng.integers(len(others)))].english)
    return out


def word_rows(words: Sequence[Word], wrong: Sequence[str], *, negated: bool,
              id_prefix: str = "") -> list[Row]:
    """Two rows a word: with its own English word, then with ``wrong[i]``; label the
    truth of the statement as written."""
    stem = "neges" if negated else "es"
    rows = []
    for word, other in zip(words, wrong, strict=True):
        for which, english, right in (("right", word.english, True), ("wrong", other, False)):
            rows.append(Row(f"{id_prefix}{stem}-{word.slug}-{which}",
                            statement(word.spanish, english, negated=negated),
                            int(right != negated), {"part_of_speech": word.part_of_speech}))
    return rows


def build(negated: bool) -> dict[str, bytes]:
    spare = spare_words()
    shipped = [w for w in WORDS if w not in spare]
    rows = word_rows(shipped, draw_wrong(shipped, shipped, np.random.default_rng(SEED)),
                     negated=negated)
    return {"neg_sp_en_trans.csv" if negated else "sp_en_trans.csv": csv_bytes(rows, SLICES)}


def make_fresh(negated: bool, spec: TaskSpec, rng: np.random.Generator, n_items: int,
               id_prefix: str) -> list[Item]:
    """``n_items`` statements about spare words (in no shipped file): half as many words,
    drawn without replacement, each with its own English word and a wrong one of its
    part of speech (from the whole list) drawn from ``rng``."""
    spare = sorted(spare_words(), key=lambda w: WORDS.index(w))
    need = halves(n_items, len(spare), "words")
    chosen = [spare[int(i)] for i in rng.choice(len(spare), size=need, replace=False)]
    rows = word_rows(chosen, draw_wrong(chosen, WORDS, rng), negated=negated,
                     id_prefix=id_prefix)
    return read_rows(spec, rows[:n_items])


TASKS = (
    TruthTask("truth_sp_en_trans", "sp_en_trans.csv", SLICES, lambda: build(False)),
    TruthTask("truth_neg_sp_en_trans", "neg_sp_en_trans.csv", SLICES, lambda: build(True)),
)
